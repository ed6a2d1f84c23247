/**
 * What the load process does per request or per iteration: the relying party's requests (hint, PAR,
 * token), the holder's browser (authorise, prompt, resume: fresh cookies per flow) and the
 * holder's wallet (OpenID4VCI: issuer and authorisation server metadata, token with tx_code, nonce,
 * proof, credential; OpenID4VP: request object, presentation, direct_post), like test/helpers/flows.ts
 * with the dev wallet, minus the wallet file (whose rewrite per credential would load this process, not
 * the server); and the bench PID issuer's credentials (identity_flow), made as test/helpers/pid.ts makes them.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { digest, ES256, generateSalt } from '@sd-jwt/crypto-nodejs';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { CompactEncrypt, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { StoredCredential } from '../../src/wallet/walletFile.js';
import { browserGet, CookieJar, json, location, type HttpClient, type HttpResponse } from './http.js';
import {
  ANNEX_C_SCOPE,
  ATTRIBUTES,
  benchMdocSignerFile,
  CLIENT,
  EXTERNAL_ISSUE_SCOPE,
  IDENTITY_SCOPE,
  ISSUE_SCOPE,
  PID_ISSUER,
  PID_VCT,
  PIN,
  MDL_DOCTYPE,
  MDL_NAMESPACE,
  mdlClaims,
  pidClaims,
  VERIFY_SCOPE,
} from './config.js';
import type { WebhookReceiver } from './webhookReceiver.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const HS256_HEADER = b64({ alg: 'HS256', typ: 'JWT' });

/** An id_token_hint as the relying party signs it (HS256 with its client secret), with a fresh jti. */
export function signHint(
  audience: string,
  expiresIn = 600,
  claims: Record<string, unknown> = { ...ATTRIBUTES, PinCode: PIN },
): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = b64({
    ...claims,
    iss: CLIENT.id,
    aud: audience,
    iat: now,
    exp: now + expiresIn,
    jti: randomBytes(12).toString('base64url'),
  });
  const input = `${HS256_HEADER}.${payload}`;
  return `${input}.${createHmac('sha256', CLIENT.secret).update(input).digest('base64url')}`;
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The endpoints a relying party reads from discovery (once per phase, as a client library caches them). */
export interface Endpoints {
  discovery: string;
  par: string;
  authorize: string;
  token: string;
}

export async function discover(client: HttpClient, discoveryPath: string): Promise<Endpoints> {
  const doc = json(await client.get(discoveryPath), 200, 'discovery');
  return {
    discovery: discoveryPath,
    par: doc.pushed_authorization_request_endpoint,
    authorize: doc.authorization_endpoint,
    token: doc.token_endpoint,
  };
}

export function parParams(scope: string, challenge: string, hint?: string): Record<string, string> {
  const p: Record<string, string> = {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: CLIENT.redirect,
    scope,
    state: 'bench-state',
    nonce: 'bench-nonce',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  if (hint !== undefined) p.id_token_hint = hint;
  return p;
}

export async function par(client: HttpClient, ep: Endpoints, params: Record<string, string>): Promise<string> {
  return json(await client.postForm(ep.par, params), 201, 'PAR').request_uri as string;
}

export function tokenParams(code: string, verifier: string): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CLIENT.redirect,
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    code_verifier: verifier,
  };
}

export async function redeem(client: HttpClient, ep: Endpoints, code: string, verifier: string): Promise<HttpResponse> {
  const res = await client.postForm(ep.token, tokenParams(code, verifier));
  if (res.status !== 200) throw new Error(`token: ${res.status} ${res.body.slice(0, 300)}`);
  return res;
}

function codeOf(callback: string): string {
  if (!callback.startsWith(CLIENT.redirect))
    throw new Error(`expected the redirect to the client, got ${callback.slice(0, 200)}`);
  const u = new URL(callback);
  const code = u.searchParams.get('code');
  if (!code)
    throw new Error(
      `the redirect carries no code: ${u.searchParams.get('error')} ${u.searchParams.get('error_description')}`,
    );
  return code;
}

/** The holder's wallet link on the prompt page (the same-device button), unescaped. */
function walletLink(html: string): string {
  const m = /href="((?:openid-credential-offer|openid4vp)[^"]+)"/.exec(html);
  if (!m) throw new Error('no wallet link on the prompt page');
  return m[1]
    .replaceAll('&amp;', '&')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>');
}

/** The presentation request in the prompt page's QR code (cross-device: no return through the browser). */
function crossDeviceLink(html: string): string {
  const m = /data-wallet-link="(openid4vp:[^"]+)"/.exec(html);
  if (!m) throw new Error('no openid4vp:// link in the QR code of the prompt page');
  return m[1]
    .replaceAll('&amp;', '&')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>');
}

/** A holder key for proofs (one per virtual user: key generation is the wallet's cost, not the server's). */
export interface HolderKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  privateJwk: JWK;
}

export async function newHolderKey(): Promise<HolderKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey) };
}

/** A credential offer (OpenID4VCI 1.0 §4.1.1), pre-authorized code grant. */
export interface CredentialOffer {
  credential_issuer: string;
  credential_configuration_ids: string[];
  grants: Record<string, { 'pre-authorized_code': string; tx_code?: { length?: number; input_mode?: string } }>;
}

export interface WalletOptions {
  /**
   * Where the metadata lives. 'inserted' (default): OpenID4VCI 1.0 §12.2.2 and RFC 8414 §3, the well-known
   * segment before the issuer's path (`/.well-known/openid-credential-issuer/<path>`), what src/wallet tries
   * first and ours serves. 'appended': under the issuer's path (`/<path>/.well-known/openid-credential-issuer`),
   * where bare oidc-provider mounted at `/<path>` serves it.
   */
  metadata?: 'inserted' | 'appended';
  /**
   * A client_id to send in the token request. Bare oidc-provider needs client authentication there; ours
   * supplies the wallet client's id in an edge, so the wallet sends none (as most wallets do).
   */
  clientId?: string;
}

function wellKnown(identifier: string, name: string, where: WalletOptions['metadata']): string {
  const u = new URL(identifier);
  const path = u.pathname.replace(/\/$/, '');
  return where === 'appended' ? `${u.origin}${path}/.well-known/${name}` : `${u.origin}/.well-known/${name}${path}`;
}

/** OpenID4VCI 1.0, pre-authorized code with tx_code: the requests src/wallet/holder.ts receive() makes. */
async function walletReceive(
  client: HttpClient,
  offerLink: string,
  holder: HolderKey,
  o: WalletOptions = {},
): Promise<string> {
  // OpenID4VCI 1.0 §4.1: the offer by value, or by reference (one more GET, as a wallet makes it)
  const link = new URL(offerLink).searchParams;
  const byValue = link.get('credential_offer');
  const offer = (
    byValue
      ? JSON.parse(byValue)
      : json(
          await client.get(link.get('credential_offer_uri')!, { accept: 'application/json' }),
          200,
          'credential offer',
        )
  ) as CredentialOffer;
  const credential = await walletRedeem(client, offer, holder, o);
  // what production issues (HAIP 1.0 §6.1.1): the issuer's chain in the header, so its bytes are measured too
  const header = JSON.parse(Buffer.from(credential.split('.')[0], 'base64url').toString('utf8')) as { x5c?: unknown };
  if (!Array.isArray(header.x5c)) throw new Error('the credential carries no x5c: the bench issuer has no certificate');
  return credential;
}

/**
 * The wallet's requests once it holds the offer: credential issuer metadata, authorisation server
 * metadata, token (pre-authorized code + tx_code), nonce, credential with a fresh ES256 proof. Any
 * answer other than 200 throws.
 */
export async function walletRedeem(
  client: HttpClient,
  offer: CredentialOffer,
  holder: HolderKey,
  o: WalletOptions = {},
): Promise<string> {
  const issuer = offer.credential_issuer;
  const meta = json(
    await client.get(wellKnown(issuer, 'openid-credential-issuer', o.metadata), { accept: 'application/json' }),
    200,
    'issuer metadata',
  );
  const as = (meta.authorization_servers as string[] | undefined)?.[0] ?? issuer;
  const asMeta = json(
    await client.get(wellKnown(as, 'oauth-authorization-server', o.metadata), { accept: 'application/json' }),
    200,
    'AS metadata',
  );
  const grant = offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'];
  const tokenParams: Record<string, string> = {
    grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
    'pre-authorized_code': grant['pre-authorized_code'],
    tx_code: PIN,
  };
  if (o.clientId !== undefined) tokenParams.client_id = o.clientId;
  const token = json(
    await client.postForm(asMeta.token_endpoint, tokenParams, { accept: 'application/json' }),
    200,
    'wallet token',
  );
  const nonce = json(
    await client.request('POST', meta.nonce_endpoint, { headers: { accept: 'application/json' } }),
    200,
    'nonce',
  ).c_nonce as string;
  const proof = await new SignJWT({ nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: holder.publicJwk })
    .setAudience(issuer)
    .setIssuedAt()
    .sign(holder.privateKey);
  const cred = json(
    await client.request('POST', meta.credential_endpoint, {
      headers: {
        authorization: `Bearer ${token.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({
        credential_configuration_id: offer.credential_configuration_ids[0],
        proofs: { jwt: [proof] },
      }),
    }),
    200,
    'credential',
  );
  return cred.credentials[0].credential as string;
}

/** Browser: authorise (following the redirect to the prompt), returns the prompt URL and its page. */
async function toPrompt(
  client: HttpClient,
  jar: CookieJar,
  authorizeUrl: string,
): Promise<{ promptUrl: string; html: string }> {
  let url = authorizeUrl;
  for (let i = 0; i < 4; i++) {
    const res = await browserGet(client, jar, url);
    if (res.status === 200) return { promptUrl: url, html: res.body };
    url = location(res, url);
  }
  throw new Error('too many redirects before the prompt');
}

/** Browser: follows redirects until the client's redirect URI, returns it. */
async function toClient(client: HttpClient, jar: CookieJar, start: string): Promise<string> {
  let url = start;
  for (let i = 0; i < 6; i++) {
    if (url.startsWith(CLIENT.redirect)) return url;
    const res = await browserGet(client, jar, url);
    url = location(res, url);
  }
  throw new Error('too many redirects before the client');
}

/**
 * Where the holder's browser finishes the interaction once the wallet step is done: the page's status
 * poll or its continue step (both carry the interaction's cookie and end on the provider's resume URL).
 * The polls before that are not modelled (how many there are depends on the holder, not the server), so
 * the browser takes the continue step at once.
 */
const finishUrlFor = (promptUrl: string) => `${promptUrl}/continue`;

const authorizeUrlFor = (ep: Endpoints, requestUri: string) =>
  `${ep.authorize}?${new URLSearchParams({ client_id: CLIENT.id, request_uri: requestUri })}`;

export interface FlowResult {
  code: string;
  verifier: string;
  credential?: string;
  token?: HttpResponse;
}

/** Ours, issuance (Version 2, PAR, PKCE, PIN): PAR, authorise, prompt, wallet (6 requests), resume[, token]. */
export async function oursIssuance(
  client: HttpClient,
  ep: Endpoints,
  o: { hint: string; holder: HolderKey; redeem: boolean },
): Promise<FlowResult> {
  const { verifier, challenge } = pkce();
  const requestUri = await par(client, ep, parParams(ISSUE_SCOPE, challenge, o.hint));
  const jar = new CookieJar();
  const { promptUrl, html } = await toPrompt(client, jar, authorizeUrlFor(ep, requestUri));
  const credential = await walletReceive(client, walletLink(html), o.holder);
  const code = codeOf(await toClient(client, jar, finishUrlFor(promptUrl)));
  return { code, verifier, credential, token: o.redeem ? await redeem(client, ep, code, verifier) : undefined };
}

/**
 * Ours, External Client flow (D13), issuance: PAR (scope with External, a state of its own), authorise,
 * prompt, wallet (as oursIssuance), then the relying party's side: the signed flow.completed webhook at
 * `webhooks`, authorise with context_id and request_uri (no cookies: the client's server, not the
 * browser), the redirect's code[, token]. The browser stays on the prompt (its status polls are not
 * modelled, as in oursIssuance). `webhookWaitMs`: from the wallet's credential to the webhook.
 */
export async function oursExternalIssuance(
  client: HttpClient,
  ep: Endpoints,
  o: { hint: string; holder: HolderKey; webhooks: WebhookReceiver; redeem: boolean },
): Promise<FlowResult & { webhookWaitMs: number }> {
  const { verifier, challenge } = pkce();
  // the webhook names the flow by its state alone: one per flow
  const state = randomBytes(16).toString('base64url');
  const requestUri = await par(client, ep, { ...parParams(EXTERNAL_ISSUE_SCOPE, challenge, o.hint), state });
  const jar = new CookieJar();
  const { html } = await toPrompt(client, jar, authorizeUrlFor(ep, requestUri));
  // waiting before the wallet step, which triggers the delivery; handled here should that step fail first
  const hook = o.webhooks.expect(state);
  hook.catch(() => undefined);
  const credential = await walletReceive(client, walletLink(html), o.holder);
  const t0 = performance.now();
  const event = await hook;
  const webhookWaitMs = performance.now() - t0;
  if (event.type !== 'flow.completed')
    throw new Error(`webhook: ${event.type} ${event.data.error ?? ''} ${event.data.error_description ?? ''}`);
  const continued = await client.get(
    `${ep.authorize}?${new URLSearchParams({ client_id: CLIENT.id, context_id: event.data.ContinuationContext, request_uri: requestUri })}`,
  );
  const callback = location(continued, ep.authorize);
  if (new URL(callback).searchParams.get('state') !== state)
    throw new Error('the redirect after context_id carries another state');
  const code = codeOf(callback);
  return {
    code,
    verifier,
    credential,
    webhookWaitMs,
    token: o.redeem ? await redeem(client, ep, code, verifier) : undefined,
  };
}

/** A credential in the bench wallet: the dev wallet's own record of one (src/wallet); `claims`: what it holds (the wallet's DCQL matching reads them). */
export type HeldCredential = StoredCredential;

export function held(
  credential: string,
  holder: HolderKey,
  claims: Record<string, unknown> = ATTRIBUTES,
): HeldCredential {
  const payload = JSON.parse(Buffer.from(credential.split('~')[0].split('.')[1], 'base64url').toString('utf8')) as {
    iss: string;
    vct: string;
  };
  return {
    id: randomBytes(8).toString('hex'),
    format: 'dc+sd-jwt',
    credential,
    issuer: payload.iss,
    vct: payload.vct,
    receivedAt: new Date().toISOString(),
    holderKey: holder.privateJwk,
    claims: { ...claims },
  };
}

/**
 * The holders' PIDs (identity_flow), one per virtual user: SD-JWT VCs of the bench PID issuer (its private
 * JWK, with its kid: config.ts readPidIssuerKey), made with @sd-jwt/sd-jwt-vc as test/helpers/pid.ts makes
 * them, every claim selectively disclosable, each bound to a fresh holder key. Made before the warm-up:
 * the issuer's signature is not the server's cost.
 */
export async function pidCredentials(issuerKey: JWK, n: number): Promise<HeldCredential[]> {
  const sdJwt = new SDJwtVcInstance({
    signer: await ES256.getSigner(issuerKey),
    signAlg: 'ES256',
    hasher: digest,
    hashAlg: 'sha-256',
    saltGenerator: generateSalt,
  });
  const out: HeldCredential[] = [];
  for (let vu = 0; vu < n; vu++) {
    const holder = await newHolderKey();
    const claims = pidClaims(vu);
    const now = Math.floor(Date.now() / 1000);
    const credential = await sdJwt.issue(
      { ...claims, iss: PID_ISSUER, vct: PID_VCT, iat: now - 60, exp: now + 3_600, cnf: { jwk: holder.publicJwk } },
      { _sd: Object.keys(claims) } as never,
      { header: { kid: issuerKey.kid } },
    );
    out.push(held(credential, holder, claims));
  }
  return out;
}

type PresentationModule = typeof import('../../src/wallet/presentation.js');
let presentationModule: Promise<PresentationModule> | undefined;

/**
 * Ours, a presentation flow (Version 2, PAR, PKCE) for `scope`: PAR, authorise, prompt, request object
 * (behind the prompt's QR code, signed under the verifier's certificate), the credential presented by
 * direct_post.jwt (the dev wallet's DCQL matching and SD-JWT presentation, encrypted), resume[, token].
 */
async function oursPresentation(
  client: HttpClient,
  ep: Endpoints,
  scope: string,
  o: { credential: HeldCredential; redeem: boolean },
): Promise<FlowResult> {
  const wallet = await (presentationModule ??= import('../../src/wallet/presentation.js'));
  const { verifier, challenge } = pkce();
  const requestUri = await par(client, ep, parParams(scope, challenge));
  const jar = new CookieJar();
  const { promptUrl, html } = await toPrompt(client, jar, authorizeUrlFor(ep, requestUri));
  const link = new URL(crossDeviceLink(html));
  const ro = await client.get(link.searchParams.get('request_uri')!, { accept: 'application/oauth-authz-req+jwt' });
  if (ro.status !== 200) throw new Error(`request object: ${ro.status} ${ro.body.slice(0, 200)}`);
  const payload = JSON.parse(Buffer.from(ro.body.trim().split('.')[1], 'base64url').toString('utf8')) as Record<
    string,
    any
  >;
  const request = {
    clientId: payload.client_id as string,
    responseUri: payload.response_uri as string,
    nonce: payload.nonce as string,
    state: payload.state as string,
    credentials: payload.dcql_query.credentials,
  };
  const selection = wallet.selectCredentials(request, [o.credential]);
  if ('missing' in selection) throw new Error(`the bench wallet cannot answer: ${selection.missing}`);
  const vpToken: Record<string, string[]> = {};
  for (const s of selection)
    vpToken[s.query.id] = [
      await wallet.createPresentation(s.credential, s.disclose, { clientId: request.clientId, nonce: request.nonce }),
    ];
  // direct_post.jwt (OpenID4VP 1.0 §8.3): encrypted to the request's own key, as a HAIP wallet answers
  const jwk = payload.response_mode === 'direct_post.jwt' ? (payload.client_metadata.jwks.keys[0] as JWK) : undefined;
  const form: Record<string, string> = jwk
    ? {
        response: await new CompactEncrypt(
          new TextEncoder().encode(JSON.stringify({ vp_token: vpToken, state: request.state })),
        )
          .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: jwk.kid })
          .encrypt(await importJWK(jwk, 'ECDH-ES')),
      }
    : { vp_token: JSON.stringify(vpToken), state: request.state };
  const answered = await client.postForm(request.responseUri, form, { accept: 'application/json' });
  if (answered.status !== 200) throw new Error(`direct_post: ${answered.status} ${answered.body.slice(0, 300)}`);
  const code = codeOf(await toClient(client, jar, finishUrlFor(promptUrl)));
  return { code, verifier, token: o.redeem ? await redeem(client, ep, code, verifier) : undefined };
}

/** Ours, verification (scope EmployeeBadge): our own credential presented (oursPresentation). */
export function oursVerification(
  client: HttpClient,
  ep: Endpoints,
  o: { credential: HeldCredential; redeem: boolean },
): Promise<FlowResult> {
  return oursPresentation(client, ep, VERIFY_SCOPE, o);
}

/** Ours, identity (issue 18, scope VerifiedIdentity): a PID of the bench PID issuer presented (oursPresentation, DCQL query `pid`). */
export function oursIdentity(
  client: HttpClient,
  ep: Endpoints,
  o: { credential: HeldCredential; redeem: boolean },
): Promise<FlowResult> {
  return oursPresentation(client, ep, IDENTITY_SCOPE, o);
}

/**
 * Ours, verification through the W3C Digital Credentials API (OpenID4VP 1.0 Appendix A, scope
 * EmployeeBadge): PAR, authorise, prompt, the page's GET of its requests (the signed one signed by the
 * server as every time), the credential presented for the origin (`origin:` KB-JWT audience), encrypted
 * (dc_api.jwt) and posted by the page as JSON, whose answer finishes the interaction and names where the
 * browser resumes, token. No request object fetch, no same-device return and no continue step.
 */
export async function oursDcApiVerification(
  client: HttpClient,
  ep: Endpoints,
  o: { credential: HeldCredential; redeem: boolean },
): Promise<FlowResult> {
  const wallet = await (presentationModule ??= import('../../src/wallet/presentation.js'));
  const { verifier, challenge } = pkce();
  const requestUri = await par(client, ep, parParams(VERIFY_SCOPE, challenge));
  const jar = new CookieJar();
  const { promptUrl } = await toPrompt(client, jar, authorizeUrlFor(ep, requestUri));
  const asked = await client.get(`${promptUrl}/dc-api`, { cookie: jar.header(), accept: 'application/json' });
  const { requests } = json(asked, 200, 'dc-api requests') as { requests: Array<{ protocol: string; data: any }> };
  // the wallet reads the unsigned entry: the same nonce, query and key as the signed one
  const data = requests.find((r) => r.protocol === 'openid4vp-v1-unsigned')!.data;
  const audience = `origin:${client.origin}`;
  const request = { clientId: audience, nonce: data.nonce as string, credentials: data.dcql_query.credentials };
  const selection = wallet.selectCredentials(request as never, [o.credential]);
  if ('missing' in selection) throw new Error(`the bench wallet cannot answer: ${selection.missing}`);
  const vpToken: Record<string, string[]> = {};
  for (const s of selection)
    vpToken[s.query.id] = [
      await wallet.createPresentation(s.credential, s.disclose, { clientId: audience, nonce: request.nonce }),
    ];
  const jwk = data.client_metadata.jwks.keys[0] as JWK;
  const response = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ vp_token: vpToken })))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: jwk.kid })
    .encrypt(await importJWK(jwk, 'ECDH-ES'));
  const answered = await client.request('POST', `${promptUrl}/dc-api`, {
    body: JSON.stringify({ protocol: 'openid4vp-v1-unsigned', data: { response } }),
    headers: { cookie: jar.header(), 'content-type': 'application/json', accept: 'application/json' },
  });
  if (answered.status !== 200) throw new Error(`dc-api answer: ${answered.status} ${answered.body.slice(0, 300)}`);
  jar.take(answered);
  // the answer finished the interaction: the browser resumes where it says, as the page does
  const code = codeOf(await toClient(client, jar, (JSON.parse(answered.body) as { next: string }).next));
  return { code, verifier, token: o.redeem ? await redeem(client, ep, code, verifier) : undefined };
}

/** A virtual user's mDL (annex_c_verification_flow): the IssuerSigned of the bench IACA and the holder's device key. */
export interface HeldMdoc {
  issuerSigned: string;
  deviceKey: JWK;
}

/**
 * One mDL per virtual user, signed by the bench IACA's document signer (config.ts benchMdocSignerFile) with
 * @auth0/mdl, each bound to a fresh device key. Made before the warm-up: the issuer's signature is not the
 * server's cost.
 */
export async function mdlCredentials(keyDir: string, n: number): Promise<HeldMdoc[]> {
  const { issueMdoc } = await import('../../test/helpers/mdoc.js');
  const signer = JSON.parse(readFileSync(benchMdocSignerFile(keyDir), 'utf8')) as { chain: string[]; privateJwk: JWK };
  const out: HeldMdoc[] = [];
  for (let vu = 0; vu < n; vu++) {
    const holder = await newHolderKey();
    const { issuerSigned } = await issueMdoc(
      { ...signer, certs: [] },
      { doctype: MDL_DOCTYPE, namespace: MDL_NAMESPACE, claims: mdlClaims, deviceKey: holder.publicJwk },
    );
    out.push({ issuerSigned, deviceKey: holder.privateJwk });
  }
  return out;
}

/**
 * Ours, verification through the Digital Credentials API with ISO/IEC 18013-7 Annex C (issue 48, scope
 * MobileLicence): PAR, authorise, prompt, the page's GET of its requests (the DeviceRequest's readerAuth
 * signed by the server as every time), the independent holder's DeviceResponse over the `dcapi`
 * SessionTranscript (@auth0/mdl) sealed to the request's key (@hpke/core; test/helpers/annexCHolder.ts),
 * posted by the page as JSON, whose answer finishes the interaction and names where the browser resumes,
 * token.
 */
export async function oursAnnexCVerification(
  client: HttpClient,
  ep: Endpoints,
  o: { credential: HeldMdoc; redeem: boolean },
): Promise<FlowResult> {
  const [{ holderAnswersAnnexC }, { presentWithAuth0 }] = await Promise.all([
    import('../../test/helpers/annexCHolder.js'),
    import('../../test/helpers/mdoc.js'),
  ]);
  const { verifier, challenge } = pkce();
  const requestUri = await par(client, ep, parParams(ANNEX_C_SCOPE, challenge));
  const jar = new CookieJar();
  const { promptUrl } = await toPrompt(client, jar, authorizeUrlFor(ep, requestUri));
  const asked = await client.get(`${promptUrl}/dc-api`, { cookie: jar.header(), accept: 'application/json' });
  const { requests } = json(asked, 200, 'dc-api requests') as { requests: Array<{ protocol: string; data: any }> };
  const answer = await holderAnswersAnnexC(requests, {
    origin: client.origin,
    present: (read, sessionTranscriptBytes) =>
      presentWithAuth0({
        issuerSigned: o.credential.issuerSigned,
        doctype: MDL_DOCTYPE,
        namespace: MDL_NAMESPACE,
        elements: [...read.docs[0].namespaces.get(MDL_NAMESPACE)!.keys()],
        deviceKey: o.credential.deviceKey,
        clientId: '',
        nonce: '',
        responseUri: '',
        sessionTranscriptBytes,
      }),
  });
  const answered = await client.request('POST', `${promptUrl}/dc-api`, {
    body: JSON.stringify({ protocol: answer.protocol, data: answer.data }),
    headers: { cookie: jar.header(), 'content-type': 'application/json', accept: 'application/json' },
  });
  if (answered.status !== 200) throw new Error(`dc-api answer: ${answered.status} ${answered.body.slice(0, 300)}`);
  jar.take(answered);
  const code = codeOf(await toClient(client, jar, (JSON.parse(answered.body) as { next: string }).next));
  return { code, verifier, token: o.redeem ? await redeem(client, ep, code, verifier) : undefined };
}

/** Baseline: bare oidc-provider's code flow: PAR, authorise, interaction (login + consent at once), resume[, token]. */
export async function baselineFlow(
  client: HttpClient,
  ep: Endpoints,
  o: { redeem: boolean; scope?: string },
): Promise<FlowResult> {
  const { verifier, challenge } = pkce();
  const requestUri = await par(client, ep, parParams(o.scope ?? ISSUE_SCOPE, challenge));
  const jar = new CookieJar();
  const code = codeOf(await toClient(client, jar, authorizeUrlFor(ep, requestUri)));
  return { code, verifier, token: o.redeem ? await redeem(client, ep, code, verifier) : undefined };
}

/** The RS256 JWTs a token response carries, by decoding it (distinct strings: ours repeats the ID token as access_token). */
export function rs256JwtsIn(body: string): { distinct: number; accessTokenIsIdToken: boolean } {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const jwts = new Set<string>();
  for (const v of Object.values(parsed)) {
    if (typeof v !== 'string' || v.split('.').length !== 3) continue;
    try {
      const header = JSON.parse(Buffer.from(v.split('.')[0], 'base64url').toString('utf8')) as { alg?: string };
      if (header.alg === 'RS256') jwts.add(v);
    } catch {
      /* not a JWT */
    }
  }
  return { distinct: jwts.size, accessTokenIsIdToken: parsed.access_token === parsed.id_token };
}
