import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { IssuerKeys, IssuerKeysUnavailable, jwtVcIssuerMetadataUrl } from '../../../src/verification/issuerKeys.js';

const key = (kid?: string, extra: Partial<JWK> = {}): JWK => ({ kty: 'EC', crv: 'P-256', x: `x-${kid}`, y: `y-${kid}`, ...(kid ? { kid } : {}), ...extra });
const own = { issuer: 'https://vc.example.com/wallet', jwks: { keys: [key('own-1')] } };

/** A fetch that serves the given documents by URL and counts the requests. */
function serving(documents: Record<string, unknown>) {
  const calls: string[] = [];
  const fetchImpl: typeof fetch = async (input) => {
    const url = String(input);
    calls.push(url);
    return url in documents ? Response.json(documents[url]) : new Response('not found', { status: 404 });
  };
  return { fetchImpl, calls };
}

describe('the SD-JWT VC issuer metadata location', () => {
  it.each([
    ['https://h/p', 'https://h/.well-known/jwt-vc-issuer/p'],
    ['https://h/a/b/', 'https://h/.well-known/jwt-vc-issuer/a/b'],
    ['https://h', 'https://h/.well-known/jwt-vc-issuer'],
    ['http://127.0.0.1:8080/issuer', 'http://127.0.0.1:8080/.well-known/jwt-vc-issuer/issuer'],
  ])('for %s is %s', (issuer, url) => {
    expect(jwtVcIssuerMetadataUrl(issuer)).toBe(url);
  });
});

describe('the keys of trusted issuers', () => {
  it('knows its own issuer and inline jwks without fetching, and trusts nobody else', async () => {
    const { fetchImpl, calls } = serving({});
    const keys = new IssuerKeys({ ownIssuer: own, trustedIssuers: [{ issuer: 'https://inline.example', jwks: { keys: [key('i-1'), key('i-2')] } }], fetch: fetchImpl });
    expect(await keys.keysFor(own.issuer, 'own-1')).toEqual([key('own-1')]);
    expect(await keys.keysFor('https://inline.example', 'i-2')).toEqual([key('i-2')]);
    expect(await keys.keysFor('https://inline.example', undefined)).toHaveLength(2);
    expect(await keys.keysFor('https://inline.example', 'nope')).toEqual([]);
    expect(await keys.keysFor('https://vc.example.com/wallet/', 'own-1')).toBeUndefined(); // exact identifier only
    expect(await keys.keysFor('https://evil.example', undefined)).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('fetches the issuer metadata, follows jwks_uri, and caches the result', async () => {
    const issuer = 'https://other.example/issuer';
    const { fetchImpl, calls } = serving({
      'https://other.example/.well-known/jwt-vc-issuer/issuer': { issuer, jwks_uri: 'https://other.example/jwks' },
      'https://other.example/jwks': { keys: [key('o-1'), key('enc', { use: 'enc' })] },
    });
    const keys = new IssuerKeys({ ownIssuer: own, trustedIssuers: [{ issuer }], fetch: fetchImpl });
    expect(await keys.keysFor(issuer, 'o-1')).toEqual([key('o-1')]);
    expect(await keys.keysFor(issuer, undefined)).toEqual([key('o-1')]); // not the encryption key
    await Promise.all([keys.keysFor(issuer, 'o-1'), keys.keysFor(issuer, 'o-1')]);
    expect(calls).toHaveLength(2);
  });

  it('fetches a configured jwksUri directly', async () => {
    const { fetchImpl, calls } = serving({ 'https://k.example/jwks.json': { keys: [key('k-1')] } });
    const keys = new IssuerKeys({ ownIssuer: own, trustedIssuers: [{ issuer: 'https://k.example', jwksUri: 'https://k.example/jwks.json' }], fetch: fetchImpl });
    expect(await keys.keysFor('https://k.example', 'k-1')).toEqual([key('k-1')]);
    expect(calls).toEqual(['https://k.example/jwks.json']);
  });

  it('refuses metadata that names another issuer, or that is missing', async () => {
    const { fetchImpl } = serving({ 'https://a.example/.well-known/jwt-vc-issuer': { issuer: 'https://b.example', jwks: { keys: [key('a')] } } });
    const keys = new IssuerKeys({ ownIssuer: own, trustedIssuers: [{ issuer: 'https://a.example' }, { issuer: 'https://c.example' }], fetch: fetchImpl });
    await expect(keys.keysFor('https://a.example', 'a')).rejects.toThrow(IssuerKeysUnavailable);
    await expect(keys.keysFor('https://c.example', 'a')).rejects.toThrow(/HTTP 404/);
  });

  it('does not cache failures', async () => {
    let up = false;
    const fetchImpl: typeof fetch = async () => (up ? Response.json({ keys: [key('k')] }) : new Response('', { status: 503 }));
    const keys = new IssuerKeys({ ownIssuer: own, trustedIssuers: [{ issuer: 'https://k.example', jwksUri: 'https://k.example/jwks' }], fetch: fetchImpl });
    await expect(keys.keysFor('https://k.example', 'k')).rejects.toThrow(IssuerKeysUnavailable);
    up = true;
    expect(await keys.keysFor('https://k.example', 'k')).toEqual([key('k')]);
  });

  it('refuses a key set larger than 256 KiB', async () => {
    const fetchImpl: typeof fetch = async () => new Response(JSON.stringify({ keys: [key('k', { x: 'a'.repeat(300 * 1024) })] }));
    const keys = new IssuerKeys({ ownIssuer: own, trustedIssuers: [{ issuer: 'https://k.example', jwksUri: 'https://k.example/jwks' }], fetch: fetchImpl });
    await expect(keys.keysFor('https://k.example', 'k')).rejects.toThrow(/exceeds/);
  });
});
