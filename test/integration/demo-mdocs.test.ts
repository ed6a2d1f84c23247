import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, testConfig, REDIRECT, type TestService } from '../helpers/service.js';
import { holderCompletesVerification, newWallet, pushAuthorization, redeemCode } from '../helpers/flows.js';
import { demoClients, demoIdentity, demoVerifier } from '../helpers/demoService.js';
import { pkcePair } from '../helpers/rp.js';
import { webhookSecret } from '../helpers/webhookReceiver.js';

/**
 * Issue 48, the demo: the dev wallet holds an mDL and a PID as an mdoc from the demo's test IACA (/demo/mdl,
 * /demo/pid "Download as an mdoc"), which config/demo.yaml lists as a trust anchor for the age check and for
 * VerifiedIdentity; the demo page offers "Over 18?".
 */
let t: TestService;

beforeAll(async () => {
  const identityFor = await demoIdentity();
  t = await startTestService((baseUrl) => ({
    demo: true,
    identity: identityFor(baseUrl),
    verifier: demoVerifier(['AgeOver18', 'VerifiedIdentity']),
    credentialTypes: [
      ...(testConfig(0).credentialTypes as unknown[]),
      {
        name: 'AgeOver18',
        displayName: 'Over 18',
        verifyOnly: true,
        mdoc: { doctype: 'org.iso.18013.5.1.mDL', namespace: 'org.iso.18013.5.1' },
        attributes: { age_over_18: { type: 'boolean' } },
      },
    ],
    clients: (demoClients(baseUrl, webhookSecret()) as Array<{ clientId: string; scopes: string[] }>).map((c) =>
      c.clientId === 'issuer-pkce' ? { ...c, scopes: [...c.scopes, 'AgeOver18'] } : c,
    ),
  }));
});
afterAll(async () => t?.stop());

/** The demo's download: its status, type, disposition and the file. */
async function download(path: string, fields: Record<string, string>) {
  const res = await fetch(`${t.url}${path}`, { method: 'POST', body: new URLSearchParams(fields) });
  const text = await res.text();
  return {
    res,
    text,
    file: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined,
  };
}

/** The relying party asks for `scope`; the dev wallet presents; the ID token's claims. */
async function verifyWith(wallet: Awaited<ReturnType<typeof newWallet>>, scope: string) {
  const { verifier, challenge } = pkcePair();
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope,
    state: 'st',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const { callbackUrl, presented } = await holderCompletesVerification(authorizeUrl, { redirectUri: REDIRECT, wallet });
  const code = new URL(callbackUrl).searchParams.get('code');
  expect(code, `${callbackUrl} ${JSON.stringify(presented)}`).not.toBeNull();
  return redeemCode(t.url, { code: code!, verifier });
}

describe('the demo: an mDL for "over 18?" and the PID as an mdoc (issue 48)', () => {
  it('the demo page offers the age check, and /demo/mdl its mDL', async () => {
    const home = await (await fetch(`${t.url}/demo`)).text();
    expect(home).toContain('Age check: Over 18');
    expect(home).toContain('name="type.AgeOver18"');
    expect(home).toContain(`${t.url}/demo/mdl`);
    const form = await fetch(`${t.url}/demo/mdl`);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('npm run wallet -- import-mdoc demo-mdl.json');
  });

  it("an adult's demo mDL answers age_over_18 true through the dev wallet, and no birth date reaches the ID token", async () => {
    const { res, file } = await download('/demo/mdl', {
      given_name: 'Ada',
      family_name: 'Lovelace',
      birth_date: '1815-12-10',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="demo-mdl.json"');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(file).toMatchObject({ doctype: 'org.iso.18013.5.1.mDL', deviceKey: { kty: 'EC', crv: 'P-256' } });
    const wallet = await newWallet();
    await wallet.importMdoc(file);
    const token = await verifyWith(wallet, 'openid AgeOver18');
    expect(token.age_over_18).toBe(true);
    expect(token.birth_date).toBeUndefined();
    expect(token.birthdate).toBeUndefined();
    expect(token.family_name).toBeUndefined();
  });

  it("a child's demo mDL answers age_over_18 false", async () => {
    const born = new Date(Date.now() - 10 * 365 * 86_400_000).toISOString().slice(0, 10);
    const { file } = await download('/demo/mdl', { given_name: 'Young', family_name: 'Person', birth_date: born });
    const wallet = await newWallet();
    await wallet.importMdoc(file);
    expect((await verifyWith(wallet, 'openid AgeOver18')).age_over_18).toBe(false);
  });

  it('the demo PID as an mdoc verifies as VerifiedIdentity, with the claims the SD-JWT PID gives', async () => {
    const { res, file } = await download('/demo/pid/mdoc', {
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
      nationalities: 'GB',
      personal_administrative_number: '4718 2093 5561',
    });
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="demo-pid-mdoc.json"');
    expect(file.doctype).toBe('eu.europa.ec.eudi.pid.1');
    const wallet = await newWallet();
    await wallet.importMdoc(file);
    expect(await verifyWith(wallet, 'openid VerifiedIdentity')).toMatchObject({
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
      nationalities: ['GB'],
    });
  });

  it('a wrong form is shown again with what to fix (400), never a 500', async () => {
    for (const [path, fields, said] of [
      ['/demo/mdl', { given_name: 'Ada', family_name: 'Lovelace', birth_date: '2999-01-01' }, 'a day in the past'],
      ['/demo/mdl', { family_name: 'Lovelace', birth_date: '1815-12-10' }, 'Enter a given name'],
      [
        '/demo/pid/mdoc',
        {
          given_name: 'Ada',
          family_name: 'L',
          birthdate: '1815-12-10',
          nationalities: 'Great Britain',
          personal_administrative_number: '1',
        },
        'two-letter country codes',
      ],
    ] as const) {
      const { res, text } = await download(path, fields);
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(text).toContain(said);
    }
  });
});
