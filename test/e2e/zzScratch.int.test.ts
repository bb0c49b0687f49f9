import { test } from 'vitest';
import { startPatroniCluster } from '../support/patroniCluster.js';
test('smoke', async () => {
  const t0 = performance.now();
  const c = await startPatroniCluster({ log: (l) => console.log(l) });
  console.log('up in', performance.now() - t0, c.url);
  const lead = await c.leader();
  console.log('sync', (await c.synchronous()).map((m) => m.name));
  const { at } = await c.kill(lead);
  const { leader, at: at2 } = await c.newLeader(lead);
  console.log('new leader', leader.name, (at2 - at) / 1000);
  await c.restart(lead);
  const s = await c.switchover();
  console.log('switchover', s.from.name, s.to.name);
  await c.close();
}, 400_000);
