/**
 * A console command that cannot be carried out (unknown member, terminal order, no stock). The
 * message is meant for a person: the command line prints it as one line and exits with code 1.
 */
export class ConsoleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsoleError';
  }
}
