import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { minimalDoc } from './fixtures.js';

/**
 * Trust roots and outbound fetches (docs/decisions.md "Outbound fetches"): what is fetched for keys and
 * metadata is https (http only on a loopback host), as the identity block's issuers, webhooks and status
 * lists already are; `outboundFetch.allowedPrivateTargets` names addresses, networks or hosts.
 */
function problems(doc: unknown): string[] {
  try {
    validateConfig(doc);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('plain-http trust roots are refused at start', () => {
  it.each(['http://issuer.example', 'http://10.0.0.1/issuer'])('trustedIssuers[].issuer and jwksUri (%s)', (url) => {
    const doc = minimalDoc();
    doc.trustedIssuers = [{ issuer: url }, { issuer: 'https://ok.example', jwksUri: `${url}/jwks` }];
    expect(problems(doc)).toEqual([
      'trustedIssuers[0].issuer: must be an https issuer (http only on a loopback host), without user, password, query or fragment',
      'trustedIssuers[1].jwksUri: must be an https jwksUri (http only on a loopback host), without user, password, query or fragment',
    ]);
  });

  it("a client's hintKeys.jwksUri", () => {
    const doc = minimalDoc();
    doc.clients[0].hintKeys = { jwksUri: 'http://rp.example/jwks' };
    expect(problems(doc)).toEqual([
      'clients[0] (clientId hr-portal).hintKeys.jwksUri: must be an https jwksUri (http only on a loopback host), without user, password, query or fragment',
    ]);
  });

  it('accepts https, and http on a loopback host (development)', () => {
    const doc = minimalDoc();
    doc.trustedIssuers = [
      { issuer: 'https://issuer.example', jwksUri: 'https://issuer.example/jwks' },
      { issuer: 'http://localhost:4000/issuer', jwksUri: 'http://127.0.0.1:4000/jwks' },
    ];
    doc.clients[0].hintKeys = { jwksUri: 'http://[::1]:4000/jwks' };
    expect(problems(doc)).toEqual([]);
  });
});

describe('outboundFetch.allowedPrivateTargets', () => {
  it('takes addresses, CIDR networks and host names; left out, it stays unset (the default depends on baseUrl)', () => {
    const doc = minimalDoc();
    expect(validateConfig(doc).outboundFetch).toEqual({});
    doc.outboundFetch = { allowedPrivateTargets: ['10.20.0.0/16', 'fd00::/8', '192.168.1.10', 'keys.internal'] };
    expect(validateConfig(doc).outboundFetch.allowedPrivateTargets).toHaveLength(4);
  });

  it.each(['10.0.0.0/33', 'not a host', 'http://keys.internal', '::1/129'])('refuses %s, naming the path', (entry) => {
    const doc = minimalDoc();
    doc.outboundFetch = { allowedPrivateTargets: [entry] };
    expect(problems(doc)).toEqual([
      'outboundFetch.allowedPrivateTargets[0]: must be an IP address, a CIDR network such as 10.0.0.0/8, or a host name',
    ]);
  });
});
