import pino, { type Logger } from 'pino';

/**
 * D17: secrets, PINs, hints, attribute values and tokens never reach logs. Request logs carry the
 * method, the path without its query, the status, the duration and the client id; nothing else.
 * The redaction list is a second line of defence for anything logged by mistake.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: [
          '*.client_secret', '*.id_token_hint', '*.PinCode', '*.tx_code', '*.code', '*.code_verifier',
          '*.id_token', '*.access_token', '*.vp_token', '*.credential', '*.password', 'req.headers.authorization',
          'req.headers.cookie', '*.ContinuationContext', '*.context_id',
        ],
        censor: '[redacted]',
      },
    },
    destination as never,
  );
}
/**
 * A request path as it may be logged: path segments that are bearer references (the credential offer
 * behind `credential_offer_uri`, whose pre-authorized code a reader of the log could redeem; the
 * OpenID4VP request object reference) are replaced. Queries are never logged.
 */
export function loggablePath(path: string): string {
  return path.replace(/\/(offers|vp\/request)\/[^/]+/g, '/$1/[redacted]');
}

export type { Logger };
