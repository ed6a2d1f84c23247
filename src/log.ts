import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Tests only (test/logCapture.ts): a file that every logger of the process also appends each line to, at
 * debug whatever its own level (`silent` too), so that a test run's whole log can be checked for secrets.
 * When the variable is not set (production), loggers are exactly as configured.
 */
export const LOG_CAPTURE_ENV = 'VC_LOG_CAPTURE';
let captureFile: { path: string; stream: DestinationStream } | undefined;

function captured(path: string): DestinationStream {
  // one file descriptor per process, however many loggers; synchronous, so no line is lost at exit
  if (captureFile?.path !== path)
    captureFile = { path, stream: pino.destination({ dest: path, append: true, sync: true }) };
  return captureFile.stream;
}

/**
 * D17: secrets, PINs, hints, attribute values and tokens never reach logs. Request logs carry the
 * method, the path without its query, the status, the duration and the client id; nothing else.
 * The redaction list is a second line of defence for anything logged by mistake.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const out = (destination as DestinationStream | undefined) ?? standardOutput();
  const capture = process.env[LOG_CAPTURE_ENV];
  if (capture) {
    const streams: pino.StreamEntry[] = [{ level: 'debug', stream: captured(capture) }];
    if (level !== 'silent') streams.push({ level: level as pino.Level, stream: out });
    return pino({ ...options(), level: 'debug' }, pino.multistream(streams));
  }
  return pino({ ...options(), level }, out);
}

/**
 * Standard output: asynchronous writes for a log collector (production), synchronous ones at a terminal,
 * where a person reads the lines and the start banner after them in the order they were made.
 */
function standardOutput(): DestinationStream {
  return pino.destination({ dest: 1, sync: process.stdout.isTTY === true });
}

function options(): pino.LoggerOptions {
  return {
    base: undefined,
    redact: {
      paths: [
        '*.client_secret',
        '*.id_token_hint',
        '*.PinCode',
        '*.tx_code',
        '*.code',
        '*.code_verifier',
        '*.id_token',
        '*.access_token',
        '*.vp_token',
        '*.credential',
        '*.password',
        'req.headers.authorization',
        'req.headers.cookie',
        '*.ContinuationContext',
        '*.context_id',
      ],
      censor: '[redacted]',
    },
  };
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
