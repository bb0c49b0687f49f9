import { describe, expect, it } from 'vitest';
import { RebuildMemory, RebuildSlot } from './projection.js';

describe('RebuildMemory', () => {
  const counter = () => new RebuildSlot(() => ({ batches: 0 }));

  it('keeps a slot from one committed batch to the next', () => {
    const slot = counter();
    const memory = new RebuildMemory();
    memory.begin();
    memory.get(slot).batches += 1;
    memory.committed();
    memory.begin();
    expect(memory.get(slot).batches).toBe(1);
  });

  it('starts from nothing after a batch that never confirmed its commit (failed or retried)', () => {
    const slot = counter();
    const memory = new RebuildMemory();
    memory.begin();
    memory.get(slot).batches += 1;
    memory.begin();
    expect(memory.get(slot).batches).toBe(0);
  });

  it('starts from nothing once forgotten, and keeps each memory apart', () => {
    const slot = counter();
    const memory = new RebuildMemory();
    const other = new RebuildMemory();
    memory.get(slot).batches += 1;
    other.get(slot).batches += 5;
    memory.forget();
    expect(memory.get(slot).batches).toBe(0);
    expect(other.get(slot).batches).toBe(5);
  });
});
