import type { Context } from 'koa';
import { invalidRequest } from '../rules/errors.js';
import { shown } from '../rules/text.js';

const FORM = 'application/x-www-form-urlencoded';

/**
 * The client went away (aborted, reset or closed its connection) before its request body ended: nothing
 * is wrong with the service and nobody is left to answer. The error boundary (src/app.ts) logs it as an
 * aborted request at info level, never as a 500.
 */
export class ClientAborted extends Error {
  constructor(cause?: unknown) {
    super(
      'the client closed the connection before the request body ended',
      cause === undefined ? undefined : { cause },
    );
    this.name = 'ClientAborted';
  }
}

/**
 * RFC 6749 §3.1, one rule for every endpoint: a parameter sent without a value is treated as omitted, and
 * a parameter sent more than once is refused with invalid_request.
 */
export function singleValued(entries: Iterable<[string, string]>): Record<string, string> {
  const seen = new Map<string, string>();
  for (const [name, value] of entries) {
    if (value === '') continue;
    if (seen.has(name)) throw invalidRequest(`parameter ${shown(name)} must not be repeated`);
    seen.set(name, value);
  }
  // fromEntries: a "__proto__" parameter becomes an own property, never the prototype
  return Object.fromEntries(seen);
}

export function readQuery(ctx: Context): Record<string, string> {
  return singleValued(new URLSearchParams(ctx.querystring));
}

/**
 * Reads an `application/x-www-form-urlencoded` body (spec: Endpoints, "All request bodies are ...") of at
 * most `limit` bytes into single-valued parameters. The parsed form is left on `ctx.request.body` and
 * `ctx.req.body`, where oidc-provider reads an already parsed body, so a request can be handed on to it.
 */
export async function readForm(ctx: Context, limit: number): Promise<Record<string, string>> {
  if (!ctx.is(FORM)) {
    const given = ctx.get('content-type').split(';')[0];
    throw invalidRequest(`request body must be ${FORM}${given ? `, not ${shown(given, 40)}` : ''}`);
  }
  const params = singleValued(new URLSearchParams((await readBody(ctx, limit)).toString('utf8')));
  setForm(ctx, params);
  return params;
}

/** Replaces the parsed form a later reader (oidc-provider) sees. */
export function setForm(ctx: Context, params: Record<string, string>): void {
  (ctx.request as { body?: unknown }).body = params;
  (ctx.req as { body?: unknown }).body = params;
}

/** The request body as sent, at most `limit` bytes (else invalid_request); a webhook's signature covers these exact bytes. */
export function readBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = ctx.request.length;
  // A declared length over the limit is refused unread: Node discards the body after the answer.
  if (declared !== undefined && declared > limit)
    return Promise.reject(invalidRequest(`request body exceeds ${limit} bytes`));
  const req = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const settle = (err: Error | undefined, body?: Buffer) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      req.off('aborted', onAborted);
      if (err) reject(err);
      else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        // stop reading without destroying the socket, so that the client gets the answer; the
        // connection cannot carry another request
        req.pause();
        ctx.set('Connection', 'close');
        return settle(invalidRequest(`request body exceeds ${limit} bytes`));
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (declared !== undefined && received !== declared)
        return settle(invalidRequest('request body does not match its content-length'));
      settle(undefined, Buffer.concat(chunks, received));
    };
    // the request stream fails ('error', ECONNRESET "aborted"), is aborted or closes before its end only
    // when the connection is gone: a client abort, never the service's fault
    const onError = (err: Error) => settle(new ClientAborted(err));
    const onAborted = () => settle(new ClientAborted());
    const onClose = () => settle(new ClientAborted());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    req.on('close', onClose);
    // a stream already gone before it was read (the client left while an earlier step awaited)
    if (req.destroyed && !req.readableEnded) settle(new ClientAborted());
  });
}
