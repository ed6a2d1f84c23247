import type { IncomingMessage } from 'node:http';
import * as querystring from 'node:querystring';
import { Readable } from 'node:stream';
import type { Context } from 'koa';

/** The same limit oidc-provider applies to request bodies, so that the edge refuses no more than it does. */
export const FORM_BODY_LIMIT = 56 * 1024;

export class BodyError extends Error {}

/** Reads a form body (RFC 6749 §4.1.3: `application/x-www-form-urlencoded`) up to the limit. */
export async function readFormBody(ctx: Context, limit = FORM_BODY_LIMIT): Promise<Buffer> {
  const declared = ctx.request.length;
  // A declared length over the limit is refused unread (Node discards the body after the answer and
  // keeps the connection). A body found too large while streaming stops being read: that connection
  // cannot carry another request, so it is closed.
  if (declared !== undefined && declared > limit) throw new BodyError(`request body exceeds ${limit} bytes`);
  const tooLarge = () => {
    ctx.set('Connection', 'close');
    return new BodyError(`request body exceeds ${limit} bytes`);
  };
  const chunks: Buffer[] = [];
  let received = 0;
  // like oidc-provider: stop reading on error without destroying the socket, so the client gets an answer
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false })) {
    received += (chunk as Buffer).length;
    if (received > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  if (declared !== undefined && received !== declared) throw new BodyError('request body does not match its content-length');
  return Buffer.concat(chunks, received);
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
 * Everything else about the request (headers, socket, url) stays as the client sent it.
 */
export function replayBody(ctx: Context, body: Buffer): void {
  const original = ctx.req;
  const replay = Readable.from([body], { objectMode: false }) as unknown as IncomingMessage;
  const headers = { ...original.headers, 'content-length': String(body.length) };
  delete headers['transfer-encoding'];
  Object.assign(replay, {
    headers,
    rawHeaders: original.rawHeaders,
    method: original.method,
    url: original.url,
    httpVersion: original.httpVersion,
    httpVersionMajor: original.httpVersionMajor,
    httpVersionMinor: original.httpVersionMinor,
    socket: original.socket,
    connection: original.socket,
    complete: true,
    trailers: original.trailers,
  });
  ctx.req = replay;
  ctx.request.req = replay;
  ctx.response.req = replay;
}
