import { expect } from 'vitest';

/** D16: of concurrent redemptions of one single-use artefact, exactly one succeeds; the rest are 400 invalid_grant, none a 5xx. */
export function expectExactlyOneWinner(results: { status: number; body: any }[]): void {
  const statuses = results.map((r) => r.status);
  expect(statuses.filter((s) => s >= 500), JSON.stringify(results.find((r) => r.status >= 500)?.body)).toEqual([]);
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  for (const r of results.filter((x) => x.status !== 200)) {
    expect(r.status).toBe(400);
    expect(r.body.error, JSON.stringify(r.body)).toBe('invalid_grant');
  }
}
