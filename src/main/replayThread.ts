import { projectionsNamed } from '../../projections/index.js';
import { serveReplayThread } from '../projecting/replayThreads.js';

/** The module of a replay's worker thread (ReplayThreads): the registered projections, by name. */
await serveReplayThread(projectionsNamed);
