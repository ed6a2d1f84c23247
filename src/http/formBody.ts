import type { IncomingMessage } from 'node:http';
import * as querystring from 'node:querystring';
import type { Context } from 'koa';

/** The same limit oidc-provider applies to request bodies, so that the edge refuses no more than it does. */
export const FORM_BODY_LIMIT = 56 * 1024;

export class BodyError extends Error {}

/** Reads a form body (RFC 6749 §4.1.3: `application/x-www-form-urlencoded`) up to the limit. */
export function readFormBody(ctx: Context, limit = FORM_BODY_LIMIT): Promise<Buffer> {
  const declared = ctx.request.length;
  // A declared length over the limit is refused unread (Node discards the body after the answer and
  // keeps the connection). A body found too large while streaming stops being read: that connection
  // cannot carry another request, so it is closed.
  if (declared !== undefined && declared > limit) return Promise.reject(new BodyError(`request body exceeds ${limit} bytes`));
  const req = ctx.req;
  // stream events rather than an async iterator: the same reading at a fraction of the bookkeeping
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const settle = (err: Error | undefined, body?: Buffer) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        // stop reading without destroying the socket, so that the client gets the answer
        req.pause();
        ctx.set('Connection', 'close');
        return settle(new BodyError(`request body exceeds ${limit} bytes`));
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (declared !== undefined && received !== declared) return settle(new BodyError('request body does not match its content-length'));
      settle(undefined, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    };
    const onError = (err: Error) => settle(err);
    const onClose = () => settle(new BodyError('request body ended early'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Parses like oidc-provider does, so the edge and the provider read the same parameters. */
export function parseForm(body: Buffer): querystring.ParsedUrlQuery {
  return querystring.parse(body.toString('utf8'));
}

/** Appends parameters to a form body without re-encoding what the client sent. */
export function appendToForm(body: Buffer, params: Record<string, string>): Buffer {
  const extra = new URLSearchParams(params).toString();
  return Buffer.concat([body, Buffer.from(body.length ? `&${extra}` : extra)]);
}

/**
 * Hands the provider a request whose body it can read again: the edge has consumed the original stream.
 * The spent request itself is given the body back (and its content-length): it reads as oidc-provider
 * reads a body (`readable`, then `iterator()`); everything else (headers, socket, url) stays the
 * client's. It is changed in place rather than wrapped: an object made the prototype of another turns
 * slow for every later property access (V8 prototype maps), and Koa and the provider read it a lot.
 */
export function replayBody(ctx: Context, body: Buffer): void {
  const req = ctx.req;
  req.headers['content-length'] = String(body.length);
  if (req.headers['transfer-encoding'] !== undefined) req.headers['transfer-encoding'] = undefined;
  // `readable` is a getter over the stream's state, which says ended: an own value shadows it
  Object.defineProperty(req, 'readable', { value: true, configurable: true, writable: true });
  (req as IncomingMessage & { iterator: () => AsyncGenerator<Buffer> }).iterator = async function* replayed() {
    yield body;
  };
}
