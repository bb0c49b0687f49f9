export { ClientOptionsError, createClient, type ClientOptions, type ListItem, type ListPath, type ListQuery, type ReadApiClient } from './client.js';
export { ExportError, type ExportBuildOptions, type ExportResult } from './exports.js';
export { knownProblemCodes, ProblemError, type ProblemCode } from './problemError.js';
export type { components, operations, paths } from './schema.js';
export type { BoxBalance, ChangeSync, FulfillmentListItem, OrderListItem, SyncOptions } from './sync.js';
export { NetworkError, type Budget, type RetryInfo, type RetryOptions } from './transport.js';
export type {
  AnalyticsException,
  BalancesWatchOptions,
  ChangeWatchOptions,
  ExceptionChange,
  ExceptionsWatchOptions,
  FeedWatcher,
  FulfillmentsWatchOptions,
  OrdersWatchOptions,
  RecordChange,
  Watcher,
} from './watch.js';
