import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  base64url,
  compactVerify,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
  type JWK,
} from 'jose';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseArgs } from '../../../src/wallet/cli.js';
import { DevWallet, WalletError } from '../../../src/wallet/holder.js';
import {
  claimsToDisclose,
  createPresentation,
  holderSigner,
  parseRequestReference,
  resolveRequest,
  selectCredentials,
  type CredentialQuery,
  type PresentationRequest,
} from '../../../src/wallet/presentation.js';
import type { StoredMdoc, StoredSdJwt } from '../../../src/wallet/walletFile.js';

const RESPONSE_URI = 'https://vc.example.com/vp/response';
const CLIENT_ID = `redirect_uri:${RESPONSE_URI}`;
const REQUEST_URI = 'https://vc.example.com/vp/request/ref';
const LINK = `openid4vp://?client_id=${encodeURIComponent(CLIENT_ID)}&request_uri=${encodeURIComponent(REQUEST_URI)}`;
const VCT = 'https://vc.example.com/types/EmployeeBadge';

const sha256 = (s: string) => createHash('sha256').update(s).digest('base64url');
const disclosureFor = (name: string, value: unknown) => base64url.encode(JSON.stringify([`salt-${name}`, name, value]));

let issuerKey: CryptoKey;
let holderPrivate: JWK;
let holderPublic: JWK;
let credential: string;

beforeAll(async () => {
  const issuer = await generateKeyPair('ES256');
  issuerKey = issuer.privateKey;
  const holder = await generateKeyPair('ES256', { extractable: true });
  holderPrivate = await exportJWK(holder.privateKey);
  holderPublic = await exportJWK(holder.publicKey);
  const disclosures = [
    disclosureFor('FirstName', 'Ada'),
    disclosureFor('LastName', 'Lovelace'),
    disclosureFor('Email', 'ada@example.com'),
  ];
  const jwt = await new SignJWT({
    iss: 'https://vc.example.com/wallet',
    vct: VCT,
    cnf: { jwk: holderPublic },
    _sd: disclosures.map(sha256),
    _sd_alg: 'sha-256',
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dc+sd-jwt', kid: 'k1' })
    .sign(issuerKey);
  credential = `${jwt}~${disclosures.join('~')}~`;
});

const stored = (overrides: Partial<StoredSdJwt> = {}): StoredSdJwt => ({
  id: 'c1',
  format: 'dc+sd-jwt',
  credential,
  issuer: 'https://vc.example.com/wallet',
  vct: VCT,
  receivedAt: '2026-01-01T00:00:00.000Z',
  holderKey: holderPrivate,
  claims: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' },
  ...overrides,
});

const badgeQuery: CredentialQuery = {
  id: 'EmployeeBadge',
  format: 'dc+sd-jwt',
  meta: { vct_values: [VCT] },
  claims: [
    { id: 'FirstName', path: ['FirstName'] },
    { id: 'LastName', path: ['LastName'] },
    { id: 'Email', path: ['Email'] },
  ],
  claim_sets: [
    ['FirstName', 'LastName', 'Email'],
    ['FirstName', 'LastName'],
  ],
};

const requestPayload = (overrides: Record<string, unknown> = {}) => ({
  response_type: 'vp_token',
  response_mode: 'direct_post',
  client_id: CLIENT_ID,
  response_uri: RESPONSE_URI,
  nonce: 'nonce-1',
  state: 'state-1',
  dcql_query: { credentials: [badgeQuery] },
  client_metadata: {
    vp_formats_supported: { 'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] } },
  },
  ...overrides,
});

const unsigned = (
  payload: Record<string, unknown>,
  header: Record<string, unknown> = { alg: 'none', typ: 'oauth-authz-req+jwt' },
) => `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(payload))}.`;

const serving =
  (body: string, status = 200): typeof fetch =>
  async () =>
    new Response(body, { status, headers: { 'content-type': 'application/oauth-authz-req+jwt' } });

describe('reading an OpenID4VP link', () => {
  it('reads client_id and request_uri, and how to fetch it (get unless said otherwise)', () => {
    expect(parseRequestReference(LINK)).toEqual({ clientId: CLIENT_ID, requestUri: REQUEST_URI, method: 'get' });
    expect(parseRequestReference(`${LINK}&request_uri_method=get`).method).toBe('get');
    expect(parseRequestReference(`${LINK}&request_uri_method=post`).method).toBe('post');
  });

  it.each(['put', 'POST', ''])('refuses request_uri_method %j as invalid_request_uri_method', (method) => {
    expect(() => parseRequestReference(`${LINK}&request_uri_method=${method}`)).toThrow(/invalid_request_uri_method/);
  });

  it.each([
    ['not a URL', 'hello'],
    ['no request_uri', `openid4vp://?client_id=${encodeURIComponent(CLIENT_ID)}`],
    ['no client_id', `openid4vp://?request_uri=${encodeURIComponent(REQUEST_URI)}`],
    ['a request by value', `openid4vp://?client_id=x&request=eyJ`],
    ['a non-http request_uri', `openid4vp://?client_id=x&request_uri=${encodeURIComponent('file:///etc/passwd')}`],
  ])('refuses %s', (_name, link) => {
    expect(() => parseRequestReference(link)).toThrow(WalletError);
  });
});

describe('resolving the request object', () => {
  it('accepts an unsigned redirect_uri request for direct_post', async () => {
    const request = await resolveRequest(LINK, serving(unsigned(requestPayload())));
    expect(request).toEqual({
      clientId: CLIENT_ID,
      responseUri: RESPONSE_URI,
      nonce: 'nonce-1',
      state: 'state-1',
      credentials: [badgeQuery],
    });
  });

  it.each([
    ['a wrong typ', unsigned(requestPayload(), { alg: 'none', typ: 'JWT' }), /typ/],
    [
      'another client_id than the link',
      unsigned(
        requestPayload({
          client_id: 'redirect_uri:https://evil.example/vp/response',
          response_uri: 'https://evil.example/vp/response',
        }),
      ),
      /client_id/,
    ],
    [
      'a response_uri that is not the client identifier',
      unsigned(requestPayload({ response_uri: 'https://evil.example/vp/response' })),
      /response_uri/,
    ],
    [
      'a signed redirect_uri request',
      unsigned(requestPayload(), { alg: 'ES256', typ: 'oauth-authz-req+jwt' }),
      /must not be signed/,
    ],
    ['another response_mode', unsigned(requestPayload({ response_mode: 'fragment' })), /response_mode/],
    [
      'direct_post.jwt without a key to encrypt to',
      unsigned(requestPayload({ response_mode: 'direct_post.jwt' })),
      /jwks/,
    ],
    ['an expired request object', unsigned(requestPayload({ exp: Math.floor(Date.now() / 1000) - 3600 })), /expired/],
    ['no nonce', unsigned(requestPayload({ nonce: undefined })), /nonce/],
    ['no DCQL query', unsigned(requestPayload({ dcql_query: undefined })), /DCQL/],
    ['transaction_data', unsigned(requestPayload({ transaction_data: ['e30'] })), /transaction_data/],
    ['something that is not a JWT', 'hello', /not .*JWT|request object/],
  ])('refuses %s', async (_name, body, message) => {
    await expect(resolveRequest(LINK, serving(body))).rejects.toThrow(message);
  });

  it("reports the verifier's error when the request object is gone", async () => {
    const gone = serving(
      JSON.stringify({
        error: 'invalid_request_uri',
        error_description: 'request_uri: unknown, expired or already retrieved: start again from the app',
      }),
      404,
    );
    await expect(resolveRequest(LINK, gone)).rejects.toThrow(
      'fetching the request object failed with HTTP 404: invalid_request_uri: request_uri: unknown, expired or already retrieved: start again from the app',
    );
  });
});

describe('choosing what to present', () => {
  it('discloses the first claim set the credential satisfies', () => {
    expect(claimsToDisclose(badgeQuery, stored())).toEqual(['FirstName', 'LastName', 'Email']);
    expect(claimsToDisclose(badgeQuery, stored({ claims: { FirstName: 'Ada', LastName: 'Lovelace' } }))).toEqual([
      'FirstName',
      'LastName',
    ]);
    expect(claimsToDisclose(badgeQuery, stored({ claims: { FirstName: 'Ada' } }))).toBeUndefined();
    expect(claimsToDisclose({ ...badgeQuery, claims: undefined, claim_sets: undefined }, stored())).toEqual([]);
    expect(
      claimsToDisclose(
        { ...badgeQuery, claim_sets: undefined },
        stored({ claims: { FirstName: 'Ada', LastName: 'Lovelace' } }),
      ),
    ).toBeUndefined();
  });

  it('selects a credential of a requested vct, or says which query it cannot answer', () => {
    const request: PresentationRequest = {
      clientId: CLIENT_ID,
      responseUri: RESPONSE_URI,
      nonce: 'n',
      credentials: [badgeQuery],
    };
    const other = stored({ id: 'c2', vct: 'https://vc.example.com/types/Other' });
    const selection = selectCredentials(request, [other, stored()]);
    expect(selection).toEqual([
      { query: badgeQuery, credential: stored(), disclose: ['FirstName', 'LastName', 'Email'] },
    ]);
    expect(selectCredentials(request, [other])).toEqual({ missing: `EmployeeBadge (${VCT})` });
    // a selector may choose any credential, even one of another type
    expect(selectCredentials(request, [other, stored()], (_q, _candidates, all) => all[0])).toMatchObject([
      { credential: { id: 'c2' } },
    ]);
  });
});

const DOCTYPE = 'com.example.employee.1';
const NAMESPACE = 'com.example.employee.1';

const mdocQuery: CredentialQuery = {
  id: 'EmployeeBadge-mdoc',
  format: 'mso_mdoc',
  meta: { doctype_value: DOCTYPE },
  trusted_authorities: [{ type: 'aki', values: ['s9tIpPmhxdiuNkHMEWNpYim8S8Y'] }],
  claims: [
    { id: 'FirstName', path: [NAMESPACE, 'FirstName'], intent_to_retain: false },
    { id: 'LastName', path: [NAMESPACE, 'LastName'], intent_to_retain: false },
    { id: 'Email', path: [NAMESPACE, 'Email'], intent_to_retain: false },
  ],
  claim_sets: [
    ['FirstName', 'LastName', 'Email'],
    ['FirstName', 'LastName'],
  ],
};

const storedMdoc = (overrides: Partial<StoredMdoc> = {}): StoredMdoc => ({
  id: 'm1',
  format: 'mso_mdoc',
  credential: 'omdpc3N1ZXJBdXRo',
  issuer: 'mdoc issuer',
  doctype: DOCTYPE,
  receivedAt: '2026-01-01T00:00:00.000Z',
  holderKey: holderPrivate,
  claims: { [NAMESPACE]: { FirstName: 'Ada', LastName: 'Lovelace' } },
  ...overrides,
});

describe('choosing between credential formats (credential_sets, mdocs)', () => {
  // what the server asks for a type it accepts in both formats: one required set, the SD-JWT VC first (§6.2)
  const eitherFormat = (extra: Partial<PresentationRequest> = {}): PresentationRequest => ({
    clientId: CLIENT_ID,
    responseUri: RESPONSE_URI,
    nonce: 'n',
    credentials: [badgeQuery, mdocQuery],
    credentialSets: [{ options: [['EmployeeBadge'], ['EmployeeBadge-mdoc']], required: true }],
    ...extra,
  });

  it('answers a set with its first option the wallet can satisfy, and only that one', () => {
    expect(selectCredentials(eitherFormat(), [storedMdoc(), stored()])).toEqual([
      { query: badgeQuery, credential: stored(), disclose: ['FirstName', 'LastName', 'Email'] },
    ]);
    expect(selectCredentials(eitherFormat(), [storedMdoc()])).toEqual([
      { query: mdocQuery, credential: storedMdoc(), disclose: ['FirstName', 'LastName'], namespace: NAMESPACE },
    ]);
  });

  it('says what is missing when no option of a required set can be answered', () => {
    expect(selectCredentials(eitherFormat(), [storedMdoc({ doctype: 'org.iso.18013.5.1.mDL' })])).toEqual({
      missing: `EmployeeBadge (${VCT}) or EmployeeBadge-mdoc (${DOCTYPE})`,
    });
  });

  it('answers an optional set only when it can, and a query chosen by two sets once', () => {
    const other: CredentialQuery = {
      id: 'Other',
      format: 'dc+sd-jwt',
      meta: { vct_values: ['https://vc.example.com/types/Other'] },
    };
    const request = eitherFormat({
      credentials: [badgeQuery, mdocQuery, other],
      credentialSets: [
        { options: [['EmployeeBadge'], ['EmployeeBadge-mdoc']] },
        { options: [['Other', 'EmployeeBadge']], required: false },
        { options: [['EmployeeBadge-mdoc', 'EmployeeBadge']], required: false },
      ],
    });
    const ids = (s: ReturnType<typeof selectCredentials>) => ('missing' in s ? s : s.map((x) => x.query.id));
    expect(ids(selectCredentials(request, [stored()]))).toEqual(['EmployeeBadge']);
    expect(
      ids(
        selectCredentials(request, [
          stored(),
          stored({ id: 'c2', vct: 'https://vc.example.com/types/Other' }),
          storedMdoc(),
        ]),
      ),
    ).toEqual(['EmployeeBadge', 'Other', 'EmployeeBadge-mdoc']);
  });

  it('without credential_sets answers every query, in either format', () => {
    const request = eitherFormat({ credentialSets: undefined });
    expect(selectCredentials(request, [stored()])).toEqual({ missing: `EmployeeBadge-mdoc (${DOCTYPE})` });
    expect(selectCredentials(request, [stored(), storedMdoc()])).toMatchObject([
      { credential: { id: 'c1' } },
      { credential: { id: 'm1' }, namespace: NAMESPACE },
    ]);
  });

  it('matches an mdoc by doctype and [namespace, element] paths, values included', () => {
    const request = eitherFormat({ credentials: [mdocQuery], credentialSets: undefined });
    expect(
      selectCredentials(request, [
        storedMdoc({ claims: { 'other.namespace': { FirstName: 'Ada', LastName: 'Lovelace' } } }),
      ]),
    ).toHaveProperty('missing');
    expect(selectCredentials(request, [storedMdoc({ claims: { [NAMESPACE]: { FirstName: 'Ada' } } })])).toHaveProperty(
      'missing',
    );
    const onlyAda: CredentialQuery = {
      ...mdocQuery,
      claims: [{ id: 'FirstName', path: [NAMESPACE, 'FirstName'], values: ['Ada'] }],
      claim_sets: undefined,
    };
    expect(selectCredentials({ ...request, credentials: [onlyAda] }, [storedMdoc()])).toMatchObject([
      { disclose: ['FirstName'] },
    ]);
    expect(
      selectCredentials(
        {
          ...request,
          credentials: [{ ...onlyAda, claims: [{ id: 'FirstName', path: [NAMESPACE, 'FirstName'], values: ['Eve'] }] }],
        },
        [storedMdoc()],
      ),
    ).toHaveProperty('missing');
    // an SD-JWT VC never answers an mdoc query, nor an mdoc an SD-JWT VC query
    expect(selectCredentials(request, [stored()])).toHaveProperty('missing');
    expect(selectCredentials({ ...request, credentials: [badgeQuery] }, [storedMdoc()])).toHaveProperty('missing');
  });

  it('refuses formats it does not hold', () => {
    const ldp: CredentialQuery = { id: 'x', format: 'ldp_vc', meta: {} };
    expect(selectCredentials(eitherFormat({ credentials: [ldp], credentialSets: undefined }), [stored()])).toEqual({
      missing: 'x (format ldp_vc is not supported by the dev wallet)',
    });
  });
});

describe('presenting an mdoc through the SD-JWT path', () => {
  it('is refused: mdocs are presented with presentationFor', async () => {
    await expect(createPresentation(storedMdoc(), [], { clientId: CLIENT_ID, nonce: 'n' })).rejects.toThrow(
      /presentationFor/,
    );
  });
});

describe('creating a presentation', () => {
  it('discloses only the chosen claims and binds them to the verifier with a KB-JWT', async () => {
    const presentation = await createPresentation(stored(), ['FirstName'], {
      clientId: CLIENT_ID,
      nonce: 'nonce-1',
      iat: 1_700_000_000,
    });
    const parts = presentation.split('~');
    expect(parts).toHaveLength(3); // issuer JWT, one disclosure, KB-JWT
    expect(JSON.parse(Buffer.from(parts[1], 'base64url').toString())[1]).toBe('FirstName');
    const kb = parts[2];
    expect(decodeProtectedHeader(kb)).toEqual({ alg: 'ES256', typ: 'kb+jwt' });
    expect(decodeJwt(kb)).toEqual({
      aud: CLIENT_ID,
      nonce: 'nonce-1',
      iat: 1_700_000_000,
      sd_hash: sha256(`${parts[0]}~${parts[1]}~`),
    });
    await expect(compactVerify(kb, await importJWK(holderPublic, 'ES256'))).resolves.toBeDefined();
  });

  it('signs with Ed25519 holder keys too, and refuses keys it cannot use', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    expect(holderSigner(await exportJWK(privateKey)).alg).toBe('EdDSA');
    expect(() => holderSigner(holderPublic)).toThrow(/not a private key/);
  });
});

describe('importing a credential issued elsewhere', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wallet-import-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps it with its holder key and its disclosed claims', async () => {
    const wallet = await DevWallet.open(join(dir, 'w.json'));
    const imported = await wallet.import(credential, holderPrivate);
    expect(imported).toMatchObject({
      format: 'dc+sd-jwt',
      issuer: 'https://vc.example.com/wallet',
      vct: VCT,
      claims: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' },
    });
    expect((await DevWallet.open(join(dir, 'w.json'))).list()).toHaveLength(1);
  });

  it('refuses a credential bound to another key, a public key, or a presentation', async () => {
    const wallet = await DevWallet.open(join(dir, 'w.json'));
    const other = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    await expect(wallet.import(credential, other)).rejects.toThrow(/not bound/);
    await expect(wallet.import(credential, holderPublic)).rejects.toThrow(/private key/);
    const presentation = await createPresentation(stored(), ['FirstName'], { clientId: CLIENT_ID, nonce: 'n' });
    await expect(wallet.import(presentation, holderPrivate)).rejects.toThrow(/not a presentation/);
    expect(wallet.list()).toEqual([]);
  });
});

describe('the present command', () => {
  it('takes one request link and a wallet file', () => {
    expect(parseArgs(['present', LINK, '--wallet', 'w.json'])).toEqual({
      command: 'present',
      requestUri: LINK,
      wallet: 'w.json',
    });
  });

  it.each([[['present']], [['present', 'a', 'b']], [['present', LINK, '--pin', '1234']]])('refuses %j', (argv) => {
    expect(() => parseArgs(argv)).toThrow();
  });
});
