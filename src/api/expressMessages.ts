import { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';

export type MessageClasses = { readonly IncomingMessage: typeof IncomingMessage; readonly ServerResponse: typeof ServerResponse };

const classesByApp = new WeakMap<Express, MessageClasses>();

/**
 * Request and response classes for the HTTP server of `app`, whose instances are born with the
 * app's request and response prototypes. Express gives every request and response the app's
 * prototypes with `Object.setPrototypeOf`, which V8 serves on a slow path: on a bare route it cost
 * half the throughput, and the re-prototyped objects outlived the young generation (every
 * scavenge promoted about 3 MB under load, then mark-compacts: CPU and p99). Once the objects
 * already have those prototypes, Express's call changes nothing and is cheap.
 *
 * The app's `request` and `response` become the prototypes of the two classes, holding what the
 * app's own objects held (`app`, and the `fresh` override of createApp) over Express's shared
 * prototypes, so call this once the app is configured.
 */
export function messageClassesOf(app: Express): MessageClasses {
  const known = classesByApp.get(app);
  if (known !== undefined) return known;
  class Request extends IncomingMessage {}
  class Response<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {}
  adopt(Request.prototype, app.request);
  adopt(Response.prototype, app.response);
  // Express reads `app.request` and `app.response` on every request (application.js `handle`).
  Object.assign(app, { request: Request.prototype, response: Response.prototype });
  const classes = { IncomingMessage: Request, ServerResponse: Response };
  classesByApp.set(app, classes);
  return classes;
}

/** `target` takes the own properties and the prototype of `source`. */
function adopt(target: object, source: object): void {
  Object.setPrototypeOf(target, Object.getPrototypeOf(source));
  const { constructor: _constructor, ...properties } = Object.getOwnPropertyDescriptors(source);
  Object.defineProperties(target, properties);
}
