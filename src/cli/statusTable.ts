import type { ProjectionsReport, ProjectionStatus } from '../projecting/status.js';

/** `projections status` for a person at a terminal: one row per projection, then what needs attention. */
export function statusTable(report: ProjectionsReport): string {
  const header = ['projection', 'state', 'generation', 'checkpoint', 'lag events', 'lag s', 'applied', 'dead letters'];
  const rows = report.projections.map((p) => [
    p.projection,
    p.state,
    p.generation === undefined ? '-' : String(p.generation),
    p.checkpoint,
    String(p.lagEvents),
    p.lagSeconds.toFixed(1),
    String(p.eventsApplied),
    String(p.deadLetters),
  ]);
  const numeric = new Set([2, 4, 5, 6, 7]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  const head = report.head;
  const notes = report.projections.flatMap(notesOf);
  return [
    `log head ${head.position}: ${head.events} events${head.lastRecordedAt === undefined ? '' : `, last recorded ${head.lastRecordedAt}`}`,
    '',
    line(header),
    ...rows.map(line),
    ...(notes.length === 0 ? [] : ['', ...notes]),
    '',
  ].join('\n');
}

function notesOf(p: ProjectionStatus): string[] {
  const notes: string[] = [];
  if (p.building !== undefined) {
    notes.push(
      p.building.running
        ? `${p.projection}: replay building generation ${p.building.generation}, ${p.building.lagEvents} events behind`
        : `${p.projection}: generation ${p.building.generation} left building by a replay that did not finish, ${p.building.lagEvents} events behind; projections replay resumes it (--fresh starts over)`,
    );
  }
  if (p.lastFailure !== undefined) notes.push(`${p.projection}: replay of generation ${p.lastFailure.generation} failed: ${p.lastFailure.error}`);
  if (p.held !== undefined) {
    const { position, eventType, eventId, schemaVersion, knownVersion } = p.held;
    notes.push(
      `${p.projection}: holds before ${eventType} ${eventId} at ${position}, schema version ${schemaVersion}; this release reads up to ${knownVersion}: deploy a release that reads it (docs/operators.md, "Deploying a change to an event")`,
    );
  }
  if (p.state === 'outdated') notes.push(`${p.projection}: built by an older definition; the projector rebuilds it (or run projections replay --projection ${p.projection})`);
  for (const dead of p.recentDeadLetters) notes.push(`${p.projection}: dead letter at ${dead.position} (${dead.eventType}, ${dead.eventId}): ${dead.error}`);
  return notes;
}

/** One line of `projections wait` progress: how many are live, and the one furthest behind. */
export function waitLine(report: ProjectionsReport, elapsedSeconds: number): string {
  const live = report.projections.filter((p) => p.state === 'live').length;
  const behind = [...report.projections].filter((p) => p.state !== 'live').sort((a, b) => b.lagEvents - a.lagEvents)[0];
  const furthest = behind === undefined ? '' : `; furthest behind: ${behind.projection} (${behind.state}, ${behind.lagEvents} events, ${behind.lagSeconds.toFixed(1)} s)`;
  return `waiting ${Math.round(elapsedSeconds)}s: ${live} of ${report.projections.length} projections live at event ${report.head.events}${furthest}`;
}
