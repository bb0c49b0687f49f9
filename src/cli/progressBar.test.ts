import { PassThrough } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { createProgressBar, formatSeconds, progressTokens } from './progressBar.js';
import { statusTable, waitLine } from './statusTable.js';
import type { ProjectionsReport } from '../projecting/status.js';

function captured() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

describe('progress bars', () => {
  test('given nothing to count yet, when the bar starts at 0 of 0, then it shows nothing (never "100% | 0/0")', () => {
    const out = captured();
    const bar = createProgressBar('seed', 'events', true, out.stream);
    bar.start(0);
    bar.update(0, 0);
    bar.stop();
    expect(out.text()).toBe('');
  });

  test('given a total, the bar shows value/total and "…" for rate and time left until a rate is measured', () => {
    const out = captured();
    let now = 0;
    const bar = createProgressBar('replay', 'events', true, out.stream, () => now);
    bar.update(0, 500);
    now = 2000;
    bar.update(100, 500);
    bar.stop();
    expect(out.text()).toContain('0/500 events | … events/s | time left …');
    expect(out.text()).toContain('100/500 events | 50 events/s | time left 8s');
    expect(out.text()).not.toMatch(/NaN|Infinity|INF|NFs|NULL/);
  });

  test('a bar that starts part way (a resumed replay) measures the rate of what this run does, not of what was done before', () => {
    const out = captured();
    let now = 0;
    const bar = createProgressBar('replay', 'events', true, out.stream, () => now);
    bar.update(800, 1000);
    now = 2000;
    bar.update(900, 1000);
    bar.stop();
    expect(out.text()).toContain('800/1000 events | … events/s | time left …');
    expect(out.text()).toContain('900/1000 events | 50 events/s | time left 2s');
  });

  test('rate and time left are finite words whatever the counts', () => {
    expect(progressTokens(0, 0, 0, 'events')).toEqual({ rate: '… events/s', left: 'time left …' });
    expect(progressTokens(10, 0, 5, 'events')).toEqual({ rate: '2 events/s', left: 'time left 0s' });
    expect([formatSeconds(7), formatSeconds(125), formatSeconds(7260), formatSeconds(Number.POSITIVE_INFINITY)]).toEqual(['7s', '2m 05s', '2h 01m', '…']);
  });
});

const report: ProjectionsReport = {
  head: { position: '0/42', events: 42, lastRecordedAt: '2026-11-26T10:00:00.000Z' },
  projections: [
    { projection: 'orders', state: 'live', generation: 2, definitionVersion: 3, checkpoint: '0/42', lagEvents: 0, lagSeconds: 0, eventsApplied: 40, deadLetters: 0, recentDeadLetters: [] },
    {
      projection: 'analytics',
      state: 'catching_up',
      generation: 1,
      definitionVersion: 1,
      checkpoint: '0/30',
      lagEvents: 12,
      lagSeconds: 3.25,
      eventsApplied: 30,
      deadLetters: 1,
      recentDeadLetters: [{ position: '0/29', eventId: 'evt_1', eventType: 'OrderPlaced', tenantId: 'ws_a', error: 'bad line', recordedAt: '2026-11-26T09:00:00.000Z' }],
    },
  ],
};

describe('projections status and wait for a person', () => {
  test('the status table has a row per projection and lists what needs attention', () => {
    expect(statusTable(report).split('\n')).toEqual([
      'log head 0/42: 42 events, last recorded 2026-11-26T10:00:00.000Z',
      '',
      'projection  state        generation  checkpoint  lag events  lag s  applied  dead letters',
      'orders      live                  2  0/42                 0    0.0       40             0',
      'analytics   catching_up           1  0/30                12    3.3       30             1',
      '',
      'analytics: dead letter at 0/29 (OrderPlaced, evt_1): bad line',
      '',
    ]);
  });

  test('a generation being built says so; one a killed replay left says that the next replay resumes it', () => {
    const building = (running: boolean): ProjectionsReport => ({
      ...report,
      projections: [{ ...(report.projections[0] as ProjectionsReport['projections'][number]), building: { generation: 3, lagEvents: 7, running } }],
    });
    expect(statusTable(building(true))).toContain('orders: replay building generation 3, 7 events behind');
    expect(statusTable(building(false))).toContain('orders: generation 3 left building by a replay that did not finish, 7 events behind; projections replay resumes it (--fresh starts over)');
  });

  test('a projection that holds names the event, its version and the newest this release reads', () => {
    const held: ProjectionsReport = {
      ...report,
      projections: [
        {
          ...(report.projections[1] as ProjectionsReport['projections'][number]),
          recentDeadLetters: [],
          deadLetters: 0,
          held: { position: '0/31', eventId: 'evt_9', eventType: 'StockMovementRecorded', schemaVersion: 3, knownVersion: 2 },
        },
      ],
    };
    expect(statusTable(held)).toContain(
      'analytics: holds before StockMovementRecorded evt_9 at 0/31, schema version 3; this release reads up to 2: deploy a release that reads it (docs/operators.md, "Deploying a change to an event")',
    );
    expect(statusTable(report)).not.toContain('holds before');
  });

  test('a wait line names how many are live and the one furthest behind', () => {
    expect(waitLine(report, 4.2)).toBe('waiting 4s: 1 of 2 projections live at event 42; furthest behind: analytics (catching_up, 12 events, 3.3 s)');
  });
});
