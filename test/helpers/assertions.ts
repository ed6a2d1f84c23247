import { expect } from 'vitest';
import { SECRETS } from './secrets.js';

/** D16: of concurrent redemptions of one single-use artefact, exactly one succeeds; the rest are 400 invalid_grant, none a 5xx. */
export function expectExactlyOneWinner(results: { status: number; body: any }[]): void {
  const statuses = results.map((r) => r.status);
  expect(
    statuses.filter((s) => s >= 500),
    JSON.stringify(results.find((r) => r.status >= 500)?.body),
  ).toEqual([]);
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  for (const r of results.filter((x) => x.status !== 200)) {
    expect(r.status).toBe(400);
    expect(r.body.error, JSON.stringify(r.body)).toBe('invalid_grant');
  }
}

/** A direct answer as the tests read it (test/helpers/rp.ts `postForm`). */
export interface DirectAnswer {
  status: number;
  body: any;
  headers: Headers;
}

export interface ExpectErrorOptions {
  /** more secrets that must not be in the body, beside the test clients' (test/helpers/secrets.ts) */
  secrets?: readonly string[];
}

/**
 * A direct error answer (D4, RFC 6749 §5.2): the status, JSON with the `error` code, an
 * `error_description` naming what is wrong (`names`: a fragment it contains, or a pattern it matches),
 * not cached (`Cache-Control: no-store`, `Pragma: no-cache`), and neither a stack trace nor a client's
 * secret in the body.
 */
export function expectError(
  res: DirectAnswer,
  error: string,
  names?: string | RegExp,
  status = 400,
  opts: ExpectErrorOptions = {},
): void {
  const body = JSON.stringify(res.body);
  expect(res.status, body).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body.error, body).toBe(error);
  expect(typeof res.body.error_description, body).toBe('string');
  if (typeof names === 'string') expect(res.body.error_description).toContain(names);
  else if (names) expect(res.body.error_description).toMatch(names);
  expect(res.headers.get('cache-control')).toContain('no-store');
  expect(res.headers.get('pragma')).toBe('no-cache');
  expect(body).not.toMatch(/at .+\.(ts|js):\d+/); // never a stack trace
  for (const secret of [...Object.values(SECRETS), ...(opts.secrets ?? [])]) expect(body).not.toContain(secret); // never a secret
}
