import * as client from 'openid-client';
import type { UpstreamIdvConfig } from '../config/schema.js';
import { isLoopbackHost } from '../rules/loopback.js';
import type { LocalizedText } from '../i18n/catalogues.js';
import { classify, UpstreamError } from './upstreamErrors.js';
import { readLimited } from '../verification/readLimited.js';
import { OutboundFetch, OutboundRefused } from '../http/outboundFetch.js';

export { UpstreamError };

/**
 * D12, VerifiedIdentity_Other: the client of the hosted identity-verification provider, an OpenID Connect
 * provider. openid-client does the protocol (discovery, authorization code with PKCE S256, state and nonce,
 * the code exchange, the ID token's validation, userinfo); this file only chooses its options, maps the
 * claims as configured, and turns every failure into an UpstreamError whose message is safe to send to the
 * relying party as its error_description.
 */

export interface UpstreamStart {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface UpstreamIdentity {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
}

/** The most any answer of the provider (discovery, JWKS, token, userinfo) may carry: a hostile one never fills memory. */
export const UPSTREAM_BODY_LIMIT = 256 * 1024;

/**
 * openid-client's fetch: every request under the outbound rules (src/http/outboundFetch.ts: the provider's
 * discovery document names the endpoints, which may not point at a private address unless allowed), every
 * answer read within UPSTREAM_BODY_LIMIT before openid-client parses it.
 */
const boundedFetch =
  (outbound: OutboundFetch): client.CustomFetch =>
  async (url, options) => {
    let res: Response;
    try {
      res = await outbound.fetch(url, options as RequestInit, 'the identity provider');
    } catch (err) {
      if (err instanceof OutboundRefused) throw new UpstreamError('unavailable', err.message);
      throw err;
    }
    const text = await readLimited(
      res,
      UPSTREAM_BODY_LIMIT,
      () => new UpstreamError('invalid', `the identity provider's answer is over ${UPSTREAM_BODY_LIMIT / 1024} KiB`),
    );
    return new Response(res.status === 204 || res.status === 304 ? null : text, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  };

const plainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export class UpstreamIdv {
  readonly displayName: LocalizedText;
  readonly #config: UpstreamIdvConfig;
  readonly #redirectUri: string;
  /** openid-client counts in seconds */
  readonly #timeout: number;
  readonly #fetch: client.CustomFetch;
  /** the discovered configuration; a failed discovery is forgotten so that the next call tries again */
  #discovered?: Promise<client.Configuration>;

  /** `outbound`: the rules its requests are held to; none but public addresses when left out */
  constructor(config: UpstreamIdvConfig, opts: { redirectUri: string; timeoutMs?: number; outbound?: OutboundFetch }) {
    this.#config = config;
    this.displayName = config.displayName;
    this.#redirectUri = opts.redirectUri;
    this.#timeout = (opts.timeoutMs ?? 5000) / 1000;
    this.#fetch = boundedFetch(opts.outbound ?? new OutboundFetch());
  }

  /** Discovery (cached after the first success), fresh state, nonce and PKCE verifier, the authorization URL. */
  async start(): Promise<UpstreamStart> {
    const configuration = await this.#configuration();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const params: Record<string, string> = {
      redirect_uri: this.#redirectUri,
      response_type: 'code',
      scope: this.#config.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    };
    if (this.#config.verifiedClaims) params.claims = JSON.stringify(this.#claimsRequest(configuration));
    let url: URL;
    try {
      url = client.buildAuthorizationUrl(configuration, params);
    } catch {
      // the discovery document has no usable authorization endpoint
      throw new UpstreamError(
        'unavailable',
        "the identity provider's discovery document names no usable authorization endpoint",
      );
    }
    return { url: url.href, state, nonce, codeVerifier };
  }

  /**
   * The provider's answer: the callback URL as the browser called it. openid-client checks the answer
   * (iss, state; an error answer), redeems the code with the PKCE verifier, and validates the ID token
   * (signature with the provider's JWKS, iss, aud, nonce, expiry); then the claims are mapped.
   */
  async finish(
    callbackUrl: URL,
    expected: { state: string; nonce: string; codeVerifier: string },
  ): Promise<UpstreamIdentity> {
    const configuration = await this.#configuration();
    // the answer's parameters on our own redirect URI, so the code is redeemed for exactly the URI it was issued to
    const current = new URL(this.#redirectUri);
    current.search = callbackUrl.search;

    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(configuration, current, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw classify(err, 'token');
    }
    const idToken = tokens.claims();
    if (!idToken) throw new UpstreamError('invalid', 'the identity provider answered without an ID token');

    let userinfo: Record<string, unknown> = {};
    if (configuration.serverMetadata().userinfo_endpoint && tokens.access_token) {
      try {
        userinfo = await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub);
      } catch (err) {
        throw classify(err, 'userinfo');
      }
    }
    const claims = this.#map(idToken, userinfo);
    // an identity check that verified none of what the operator asked for onboards nobody
    if (Object.keys(claims).length === 0)
      throw new UpstreamError(
        'invalid',
        'the identity provider gave none of the configured claims (check identity.VerifiedIdentity_Other.scopes and claims)',
      );
    return { issuer: idToken.iss, subject: idToken.sub, claims };
  }

  async #configuration(): Promise<client.Configuration> {
    if (!this.#discovered) {
      const pending = this.#discover();
      this.#discovered = pending;
      pending.catch(() => {
        if (this.#discovered === pending) this.#discovered = undefined;
      });
    }
    return this.#discovered;
  }

  async #discover(): Promise<client.Configuration> {
    const issuer = new URL(this.#config.issuer);
    const secret = this.#config.clientSecret;
    const auth =
      this.#config.clientAuth === 'client_secret_post'
        ? client.ClientSecretPost(secret)
        : client.ClientSecretBasic(secret);
    // the issue asks for the ID token's signature to be checked against the provider's JWKS, which
    // openid-client does only with its non-repudiation checks (over TLS it relies on TLS by default)
    const execute: Array<(c: client.Configuration) => void> = [client.enableNonRepudiationChecks];
    // http only on loopback (development and tests): the config allows nothing else, and anything else stays https-only here
    if (issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname)) execute.push(client.allowInsecureRequests);
    try {
      return await client.discovery(issuer, this.#config.clientId, { client_secret: secret }, auth, {
        execute,
        timeout: this.#timeout,
        [client.customFetch]: this.#fetch,
      });
    } catch (err) {
      throw classify(err, 'discovery');
    }
  }

  /**
   * OIDC Core §5.5 claims request for OpenID Connect for Identity Assurance 1.0: the configured claims as
   * `verified_claims`, with any trust framework, in the ID token and (when the provider has one) userinfo.
   */
  #claimsRequest(configuration: client.Configuration): Record<string, unknown> {
    const request = {
      verified_claims: {
        verification: { trust_framework: null },
        claims: Object.fromEntries(Object.keys(this.#config.claims).map((name) => [name, null])),
      },
    };
    return configuration.serverMetadata().userinfo_endpoint
      ? { id_token: request, userinfo: request }
      : { id_token: request };
  }

  /**
   * The configured claims, provider name -> our name, from the validated ID token, completed by userinfo
   * (the ID token's value wins where both give one). A claim the provider did not give is left out.
   * verifiedClaims: the same from `verified_claims.claims`, kept under `verified_claims` with its verification.
   */
  #map(idToken: Record<string, unknown>, userinfo: Record<string, unknown>): Record<string, unknown> {
    if (!this.#config.verifiedClaims) return this.#rename((name) => idToken[name] ?? userinfo[name]);
    // one verification and its claims, never claims of two verifications mixed: the ID token's, else userinfo's
    const found = verifiedClaims(idToken.verified_claims) ?? verifiedClaims(userinfo.verified_claims);
    if (!found) return {};
    const claims = this.#rename((name) => found.claims[name]);
    if (Object.keys(claims).length === 0) return {};
    return { verified_claims: { verification: found.verification, claims } };
  }

  #rename(value: (providerName: string) => unknown): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [providerName, ourName] of Object.entries(this.#config.claims)) {
      const v = value(providerName);
      if (v !== undefined && v !== null) out[ourName] = v;
    }
    return out;
  }
}

/** The first `verified_claims` element with a verification and claims object (IDA allows one or an array). */
function verifiedClaims(
  value: unknown,
): { verification: Record<string, unknown>; claims: Record<string, unknown> } | undefined {
  for (const item of Array.isArray(value) ? value : [value]) {
    if (plainObject(item) && plainObject(item.verification) && plainObject(item.claims))
      return { verification: item.verification, claims: item.claims };
  }
  return undefined;
}
