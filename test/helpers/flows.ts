import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DevWallet } from '../../src/wallet/holder.js';
import * as oidc from 'openid-client';
import {
  base64url,
  calculateJwkThumbprint,
  CompactEncrypt,
  createRemoteJWKSet,
  importJWK,
  jwtVerify,
  type JWK,
} from 'jose';
import { presentWithAuth0 } from './mdoc.js';
import { expect } from 'vitest';
import { Browser, makeHint, offerFromPage, pkcePair, postForm, resolveOfferLink } from './rp.js';
import type { CredentialOffer } from '../../src/issuance/offerUri.js';
import { REDIRECT, SECRETS, VERIFIER_TRUST } from './service.js';
import { CLIENT_SECRETS } from './secrets.js';

/** A dev wallet that trusts the test services' verifier CA (test/helpers/service.ts). */
export async function newWallet(): Promise<DevWallet> {
  return DevWallet.open(join(mkdtempSync(join(tmpdir(), 'vc-wallet-')), 'wallet.json'), { trust: VERIFIER_TRUST });
}

/**
 * The holder's part of a flow: the browser opens the authorise URL and lands on the prompt, the
 * wallet takes the offer from the page, and the browser continues to the relying party's redirect URI.
 */
export async function holderCompletesIssuance(
  authorizeUrl: string,
  /**
   * `resolveOffer`: also fetch the Credential Offer the link points at, before the wallet uses it up;
   * `mdoc`: the wallet picks the offer's mso_mdoc configuration (checked up to `issuerTrust` when given)
   */
  opts: {
    redirectUri: string;
    wallet: DevWallet;
    pin?: string;
    resolveOffer?: boolean;
    mdoc?: { issuerTrust?: Uint8Array[] };
  },
): Promise<{ callbackUrl: string; offer: string; resolvedOffer?: CredentialOffer; browser: Browser }> {
  const browser = new Browser(opts.redirectUri);
  const prompt = await browser.follow(authorizeUrl);
  if (!prompt.html) throw new Error(`expected the prompt page, arrived at ${prompt.final}`);
  const offer = offerFromPage(prompt.html);
  const resolvedOffer = opts.resolveOffer ? await resolveOfferLink(offer) : undefined;
  if (opts.mdoc) await opts.wallet.receiveMdoc(offer, { pin: opts.pin, ...opts.mdoc });
  else await opts.wallet.receive(offer, { pin: opts.pin });
  const done = await browser.follow(`${prompt.final}/continue`);
  if (done.html !== undefined)
    throw new Error(`expected a redirect to the client, got ${done.res?.status} at ${done.final}`);
  return { callbackUrl: done.final, offer, resolvedOffer, browser };
}

/** The presentation request in the prompt page's QR code (cross-device: the flow finishes without the wallet sending the browser back). */
export function requestFromPage(html: string): string {
  const m = /data-wallet-link="(openid4vp:[^"]+)"/.exec(html);
  if (!m) throw new Error('no openid4vp:// link in the QR code of the page');
  return unescapeAttribute(m[1]);
}

/** The presentation request of the prompt page's "Open in wallet on this device" button (same-device, OpenID4VP 1.0 §8.2). */
export function sameDeviceRequestFromPage(html: string): string {
  const link = offerFromPage(html);
  if (!link.startsWith('openid4vp://')) throw new Error(`expected an openid4vp:// link, got ${link.slice(0, 40)}`);
  return link;
}

const unescapeAttribute = (v: string) =>
  v
    .replaceAll('&amp;', '&')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>');

/**
 * The holder's part of a verification: the browser lands on the prompt, the wallet presents to the
 * request on the page, and the browser continues to the relying party's redirect URI.
 */
export async function holderCompletesVerification(
  authorizeUrl: string,
  opts: { redirectUri: string; wallet: DevWallet },
): Promise<{ callbackUrl: string; request: string; presented: { status: number; body: unknown } }> {
  const browser = new Browser(opts.redirectUri);
  const prompt = await browser.follow(authorizeUrl);
  if (!prompt.html) throw new Error(`expected the prompt page, arrived at ${prompt.final}`);
  const request = requestFromPage(prompt.html);
  const presented = await opts.wallet.present(request);
  const done = await browser.follow(`${prompt.final}/continue`);
  if (done.html !== undefined)
    throw new Error(`expected a redirect to the client, got ${done.res?.status} at ${done.final}`);
  return { callbackUrl: done.final, request, presented };
}

/**
 * A relying party's first step of an issuance, with openid-client unmodified: discovery (Version 2),
 * an HS256 id_token_hint, PKCE S256 and PAR. Returns what the code exchange needs afterwards.
 */
export async function pushIssuance(
  base: string,
  /** `params`: more authorization request parameters (e.g. ui_locales) */
  o: {
    clientId: string;
    secret: string;
    attributes: Record<string, unknown>;
    pin?: string;
    redirectUri: string;
    params?: Record<string, string>;
  },
) {
  const config = await oidc.discovery(
    new URL(`${base}/v2.0/.well-known/openid-configuration`),
    o.clientId,
    o.secret,
    oidc.ClientSecretPost(o.secret),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const hint = await makeHint({
    clientId: o.clientId,
    secret: o.secret,
    audience: base,
    claims: { ...o.attributes, ...(o.pin ? { PinCode: o.pin } : {}) },
  });
  const authorizeUrl = await oidc.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: o.redirectUri,
    scope: 'openid issue.EmployeeBadge',
    state,
    nonce,
    id_token_hint: hint,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...o.params,
  });
  return { config, verifier, state, nonce, authorizeUrl };
}

/**
 * The rest of a pushed issuance (what `pushIssuance` returns): a new dev wallet takes the prompt's offer
 * with `pin`, the browser returns to REDIRECT, and openid-client redeems the code (PKCE, state, nonce, the
 * ID token checked with the provider's keys).
 */
export async function completeIssuance(pushed: Awaited<ReturnType<typeof pushIssuance>>, pin?: string) {
  const wallet = await newWallet();
  const { callbackUrl } = await holderCompletesIssuance(pushed.authorizeUrl.href, {
    redirectUri: REDIRECT,
    wallet,
    pin,
  });
  const tokens = await oidc.authorizationCodeGrant(pushed.config, new URL(callbackUrl), {
    pkceCodeVerifier: pushed.verifier,
    expectedState: pushed.state,
    expectedNonce: pushed.nonce,
    idTokenExpected: true,
  });
  return { tokens, wallet };
}

/** The test client issuer-pkce verifies an EmployeeBadge (PAR, PKCE) and the wallet presents: the callback (code or error) and the wallet's answer. */
export async function verifyEmployeeBadge(
  base: string,
  wallet: DevWallet,
): Promise<{ callback: URL; presented: { status: number; body: unknown } }> {
  const config = await oidc.discovery(
    new URL(`${base}/v2.0/.well-known/openid-configuration`),
    'issuer-pkce',
    SECRETS.pkceIssuer,
    oidc.ClientSecretPost(SECRETS.pkceIssuer),
    {
      execute: [oidc.allowInsecureRequests],
    },
  );
  const verifier = oidc.randomPKCECodeVerifier();
  const url = await oidc.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: REDIRECT,
    scope: 'openid EmployeeBadge',
    nonce: oidc.randomNonce(),
    state: oidc.randomState(),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callbackUrl, presented } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
  return { callback: new URL(callbackUrl), presented };
}

/**
 * A Version 2 pushed authorization request (RFC 9126) of the code flow to REDIRECT, by `params.client_id`
 * (`issuer-pkce` unless said) with its secret; `params` add fields or replace these (undefined leaves one
 * out). The push must succeed (201): its request_uri and the authorise URL the holder's browser opens.
 */
export async function pushAuthorization(
  base: string,
  params: Record<string, string | undefined>,
): Promise<{ requestUri: string; authorizeUrl: string }> {
  const clientId = params.client_id ?? 'issuer-pkce';
  const pushed = await postForm(`${base}/v2.0/oidc/par`, {
    client_id: clientId,
    client_secret: CLIENT_SECRETS[clientId],
    response_type: 'code',
    redirect_uri: REDIRECT,
    ...params,
  });
  expect(pushed.status, JSON.stringify(pushed.body)).toBe(201);
  const requestUri: string = pushed.body.request_uri;
  return {
    requestUri,
    authorizeUrl: `${base}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri })}`,
  };
}

/**
 * The relying party pushes a code flow for `scope` with PKCE, a fresh state and nonce `n` (`params` add
 * fields or replace these, as in pushAuthorization), and the holder's browser lands on the prompt (200).
 */
export async function openPrompt(base: string, scope: string, params: Record<string, string | undefined> = {}) {
  const { verifier, challenge } = pkcePair();
  const state = params.state ?? `st-${randomBytes(6).toString('hex')}`;
  const { authorizeUrl } = await pushAuthorization(base, {
    scope,
    state,
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  expect(prompt.res?.status, `expected the prompt at ${prompt.final}`).toBe(200);
  return { state, verifier, browser, promptUrl: prompt.final, html: prompt.html! };
}

/**
 * The relying party redeems an authorization code at the Version 2 token endpoint (`verifier`: the PKCE
 * code verifier, when the request had a challenge). The token request must succeed (200), and the ID token
 * verify with the service's keys, as issued by the service to this client: its claims.
 */
export async function redeemCode(
  base: string,
  o: { code: string; verifier?: string; clientId?: string },
): Promise<Record<string, unknown>> {
  const clientId = o.clientId ?? 'issuer-pkce';
  const token = await postForm(`${base}/v2.0/oidc/token`, {
    grant_type: 'authorization_code',
    client_id: clientId,
    client_secret: CLIENT_SECRETS[clientId],
    code: o.code,
    redirect_uri: REDIRECT,
    code_verifier: o.verifier,
  });
  expect(token.status, JSON.stringify(token.body)).toBe(200);
  const { payload } = await jwtVerify(
    token.body.id_token,
    createRemoteJWKSet(new URL(`${base}/v2.0/.well-known/openid-configuration/jwks`)),
    { issuer: base, audience: clientId },
  );
  return payload as Record<string, unknown>;
}

/**
 * The relying party (issuer-pkce, PAR, PKCE) asks our verifier for `scope`; an independent holder, @auth0/mdl,
 * answers the signed request with `issuerSigned` disclosing `elements` (an encrypted `direct_post.jwt`
 * answer, OpenID4VP 1.0 §B.2.6.1) under the Credential Query id `queryId`; the browser goes on. Returns the
 * verifier's answer to the wallet and where the browser ended (a code, or an error) with the PKCE verifier.
 */
export async function presentMdocWithAuth0(
  base: string,
  o: {
    scope: string;
    queryId: string;
    issuerSigned: string;
    deviceKey: JWK;
    doctype: string;
    namespace: string;
    elements: string[];
  },
): Promise<{ answer: { status: number; body: any }; callback: URL; verifier: string; state: string }> {
  const { verifier, state, browser, promptUrl, html } = await openPrompt(base, o.scope);
  const res = await fetch(new URL(requestFromPage(html)).searchParams.get('request_uri')!);
  const request = JSON.parse(Buffer.from((await res.text()).split('.')[1], 'base64url').toString()) as Record<
    string,
    any
  >;
  const jwk = request.client_metadata.jwks.keys[0] as JWK;
  const deviceResponse = await presentWithAuth0({
    issuerSigned: o.issuerSigned,
    doctype: o.doctype,
    namespace: o.namespace,
    elements: o.elements,
    deviceKey: o.deviceKey,
    clientId: request.client_id,
    nonce: request.nonce,
    responseUri: request.response_uri,
    jwkThumbprint: base64url.decode(await calculateJwkThumbprint(jwk)),
  });
  const jwe = await new CompactEncrypt(
    new TextEncoder().encode(JSON.stringify({ vp_token: { [o.queryId]: [deviceResponse] }, state: request.state })),
  )
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: jwk.kid! })
    .encrypt(await importJWK(jwk, 'ECDH-ES'));
  const answer = await postForm(request.response_uri, { response: jwe });
  const done = await browser.follow(`${promptUrl}/continue`);
  return { answer, callback: new URL(done.final), verifier, state };
}
