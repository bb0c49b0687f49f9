export { createClient, type ClientOptions, type ListItem, type ListPath, type ListQuery, type ReadApiClient } from './client.js';
export { ExportError, type ExportBuildOptions } from './exports.js';
export { ProblemError } from './problemError.js';
export type { components, operations, paths } from './schema.js';
export type { Budget, RetryOptions } from './transport.js';
export type {
  AnalyticsException,
  ExceptionChange,
  ExceptionsWatchOptions,
  FulfillmentListItem,
  FulfillmentsWatchOptions,
  OrderListItem,
  OrdersWatchOptions,
  RecordChange,
  Watcher,
} from './watch.js';
