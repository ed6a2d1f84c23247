import { describe, expect, it } from 'vitest';
import {
  classifyWrite,
  judgeFigure,
  originOf,
  parseCommands,
  RoundTrips,
  OWN_BYTES_LATER_BUDGET,
} from '../../../bench/lib/footprint.js';

/**
 * bench/redis-footprint.ts's accounting (bench/README.md, "Redis footprint per flow"): each round trip of
 * the service's connection told by its keys (oidc-provider's models are the floor: docs/operations.md,
 * "Redis footprint"), and each figure's verdict over the repeats.
 */
const resp = (...commands: string[][]) =>
  commands.map((c) => `*${c.length}\r\n${c.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`).join('');

describe('redis footprint: whose each round trip is', () => {
  it('parses a write of several pipelined commands back into them (RESP), multi-byte values included', () => {
    const write = resp(['GET', 'bench:oidc:v2:Session:{a}'], ['SET', 'bench:step:{x}', '{"n":"é"}', 'EX', '30']);
    expect(parseCommands(write)).toEqual([
      ['GET', 'bench:oidc:v2:Session:{a}'],
      ['SET', 'bench:step:{x}', Buffer.from('{"n":"é"}').toString('latin1'), 'EX', '30'],
    ]);
    expect(parseCommands(Buffer.from(write))).toHaveLength(2);
    expect(parseCommands('not resp')).toEqual([]);
  });

  it("tells oidc-provider's models, the service's records, rate limits and timers apart by key", () => {
    const p = 'bench:';
    expect(originOf(['GET', 'bench:oidc:v2:AuthorizationCode:{c}'], p)).toBe('provider');
    expect(originOf(['GET', 'bench:oidc:wallet:Grant:{g}'], p)).toBe('provider');
    expect(originOf(['EVALSHA', 'abc', '2', 'bench:status:wallet:{l}:count', 'bench:status:wallet:{l}:i:7'], p)).toBe(
      'service',
    );
    expect(originOf(['GET', 'bench:status:wallet:current'], p)).toBe('background');
    expect(originOf(['EVALSHA', 'abc', '1', 'bench:rl:par:addr:127.0.0.1', '64'], p)).toBe('rateLimits');
    expect(originOf(['ZRANGEBYSCORE', 'bench:webhooks:due', '0', '1'], p)).toBe('background');
    expect(originOf(['PING'], p)).toBeNull();
  });

  it('classes a write holding both the provider and the service as shared, and counts it per request', () => {
    expect(
      classifyWrite(
        [
          ['GET', 'bench:oidc:x'],
          ['GET', 'bench:hint:{h}'],
        ],
        'bench:',
      ).write,
    ).toBe('shared');
    expect(
      classifyWrite(
        [
          ['GET', 'bench:oidc:x'],
          ['GET', 'bench:rl:a'],
        ],
        'bench:',
      ).write,
    ).toBe('provider');
    expect(classifyWrite([['GET', 'bench:rl:a']], 'bench:').write).toBe('rateLimits');
    expect(classifyWrite([['PING']], 'bench:').write).toBe('other');
    const trips = new RoundTrips('bench:');
    trips.request = 'POST /v2.0/oidc/par';
    trips.onWrite(resp(['SET', 'bench:hint:{h}', '1'], ['SET', 'bench:oidc:v2:PushedAuthorizationRequest:{r}', '{}']));
    trips.onWrite(Buffer.from(resp(['GET', 'bench:rl:par:addr:127.0.0.1'])));
    expect(trips.writes).toMatchObject({ shared: 1, rateLimits: 1, provider: 0, service: 0 });
    expect(trips.commands).toMatchObject({ provider: 1, service: 1, rateLimits: 1 });
    expect(trips.byRequest.get('POST /v2.0/oidc/par')).toMatchObject({ shared: 1, rateLimits: 1 });
  });
});

describe('redis footprint: verdicts over the repeats', () => {
  it('compares exact counts exactly with the recorded footprint: one more round trip is missed', () => {
    expect(judgeFigure([15, 15, 15, 15, 15], { kind: 'exact' }, 15).verdict).toBe('met');
    expect(judgeFigure([16, 16, 16, 16, 16], { kind: 'exact' }, 15).verdict).toBe('missed');
    expect(judgeFigure([14, 14, 14], { kind: 'exact' }, 15).verdict).toBe('met');
    // a count that moved in some repeats only straddles the recorded figure
    expect(judgeFigure([15, 15.2, 15, 15.1, 15], { kind: 'exact' }, 15).verdict).toBe('undecided');
  });

  it('gives bytes 5 % over the recorded figure, and the flow’s own bytes 60 s later their 3 KB', () => {
    expect(judgeFigure([7300, 7310, 7290], { kind: 'bytes' }, 7301).verdict).toBe('met');
    expect(judgeFigure([8000, 8100, 8050], { kind: 'bytes' }, 7301).verdict).toBe('missed');
    expect(judgeFigure([2576, 2576, 2576], { kind: 'bytes', budget: OWN_BYTES_LATER_BUDGET }).verdict).toBe('met');
    expect(judgeFigure([3500, 3600, 3550], { kind: 'bytes', budget: OWN_BYTES_LATER_BUDGET }).verdict).toBe('missed');
  });

  it('judges nothing without a recorded figure, and never what varies with timing', () => {
    expect(judgeFigure([42, 43], { kind: 'exact' })).toMatchObject({ verdict: null, median: 42.5 });
    expect(judgeFigure([0.5, 0.7], { kind: 'shown' }, 0.5).verdict).toBeNull();
  });
});
