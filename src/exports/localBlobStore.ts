import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { assertStorageKey, downloadLinkValidityMs, isStorageKey, type BlobStore, type DownloadLink, type StoredFile } from './blobStore.js';

/** Reads the bytes behind a verified download link; what the download route needs. */
export type DownloadSource = {
  /** Whether `expires` and `signature` (exactly as received) are a link this store issued for `key`, still valid at `now`. */
  verify(key: string, expires: string, signature: string, now: Date): boolean;
  /** The file's bytes, or undefined when the key is malformed or the file is not there. */
  read(key: string): Promise<Buffer | undefined>;
};

export type LocalBlobStore = BlobStore & DownloadSource & { readonly kind: 'local' };

export type LocalBlobStoreOptions = {
  /** Root of the files (the composition passes `<DATA_DIR>/exports`); a file lives at `<directory>/<key>`. */
  readonly directory: string;
  /** Origin the links point at, e.g. `https://api.example.com`; the route is mounted at `/downloads`. */
  readonly baseUrl: string | (() => string);
  /** HMAC key of the links (the service's signing secret; the message is domain-separated). */
  readonly secret: string;
};

const expiresPattern = /^\d{1,12}$/;
const signaturePattern = /^[A-Za-z0-9_-]{43}$/;

/**
 * Export files on the local disk, downloaded through links signed with HMAC-SHA256:
 * `<baseUrl>/downloads/<key>?expires=<unix seconds>&signature=<base64url MAC>`.
 */
export function createLocalBlobStore(options: LocalBlobStoreOptions): LocalBlobStore {
  const root = path.resolve(options.directory);
  // A function when the address is known only once the server listens (an ephemeral port).
  const baseUrl = () => (typeof options.baseUrl === 'function' ? options.baseUrl() : options.baseUrl).replace(/\/+$/, '');
  const { secret } = options;

  const sign = (key: string, expires: string): string =>
    createHmac('sha256', secret).update(`export-download:v1\n${key}\n${expires}`).digest('base64url');

  // Validation already rules out `..`; the prefix check also holds if that rule ever loosens.
  const fileOf = (key: string): string => {
    assertStorageKey(key);
    const file = path.resolve(root, key);
    if (!file.startsWith(root + path.sep)) throw new Error('invalid storage key');
    return file;
  };

  const writeAtomically = async (file: string, bytes: Buffer): Promise<void> => {
    const directory = path.dirname(file);
    const temporary = path.join(directory, `.${path.basename(file)}.${randomUUID()}.tmp`);
    await mkdir(directory, { recursive: true });
    try {
      const handle = await open(temporary, 'wx');
      try {
        await handle.writeFile(bytes);
        // Flushed before the rename, so a crash cannot leave a renamed but empty file.
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  };

  return {
    kind: 'local',

    async put(file: StoredFile, bytes: Buffer): Promise<void> {
      const target = fileOf(file.key);
      try {
        await writeAtomically(target, bytes);
      } catch (error) {
        // A concurrent delete may remove a parent directory between mkdir and open: try once more.
        if (!isCode(error, 'ENOENT')) throw error;
        await writeAtomically(target, bytes);
      }
    },

    async link(file: StoredFile, now: Date): Promise<DownloadLink> {
      assertStorageKey(file.key);
      // Whole seconds, rounded up: the link works for at least the full validity after `now`, and
      // expiresAt is exactly the moment it stops working.
      const expiresSeconds = Math.ceil((now.getTime() + downloadLinkValidityMs) / 1000);
      const expires = String(expiresSeconds);
      const query = new URLSearchParams({ expires, signature: sign(file.key, expires) });
      return { url: `${baseUrl()}/downloads/${file.key}?${query.toString()}`, expiresAt: new Date(expiresSeconds * 1000) };
    },

    async delete(key: string): Promise<void> {
      const file = fileOf(key);
      await rm(file, { force: true });
      await removeEmptyParents(path.dirname(file), root);
    },

    close(): Promise<void> {
      return Promise.resolve();
    },

    verify(key, expires, signature, now) {
      if (!isStorageKey(key) || !expiresPattern.test(expires) || !signaturePattern.test(signature)) return false;
      // Compared as text: base64url decoding ignores the spare bits of the last character.
      const given = Buffer.from(signature);
      const expected = Buffer.from(sign(key, expires));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
      return now.getTime() < Number(expires) * 1000;
    },

    async read(key) {
      if (!isStorageKey(key)) return undefined;
      try {
        return await readFile(fileOf(key));
      } catch (error) {
        if (isCode(error, 'ENOENT') || isCode(error, 'EISDIR') || isCode(error, 'ENOTDIR')) return undefined;
        throw error;
      }
    },
  };
}

/** Removes the directories a deleted file leaves empty (one per export), up to but not including the root. */
async function removeEmptyParents(directory: string, root: string): Promise<void> {
  let current = directory;
  while (current.startsWith(root + path.sep)) {
    try {
      await rmdir(current);
    } catch {
      // Not empty (another export), already gone, or in use: all mean stop here.
      return;
    }
    current = path.dirname(current);
  }
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error as { code: unknown }).code === code;
}
