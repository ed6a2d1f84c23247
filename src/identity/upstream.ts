import * as client from 'openid-client';
import type { UpstreamIdvConfig } from '../config/schema.js';
import { isLoopbackHost } from '../rules/loopback.js';
import type { LocalizedText } from '../i18n/catalogues.js';

/**
 * D12, VerifiedIdentity_Other: the client of the hosted identity-verification provider, an OpenID Connect
 * provider. openid-client does the protocol (discovery, authorization code with PKCE S256, state and nonce,
 * the code exchange, the ID token's validation, userinfo); this file only chooses its options, maps the
 * claims as configured, and turns every failure into an UpstreamError whose message is safe to send to the
 * relying party as its error_description.
 */

/**
 * reason: 'unavailable' (discovery/network/timeout/5xx), 'refused' (the provider answered an error, e.g.
 * access_denied, or the person declined), 'invalid' (bad state, nonce, iss, aud, signature, expiry,
 * malformed answer). The message is plain words: never claim values, codes, tokens or the client secret.
 */
export class UpstreamError extends Error {
  constructor(
    readonly reason: 'unavailable' | 'refused' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

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

type Step = 'discovery' | 'token' | 'userinfo';

/** Errors of the authorization response that mean the provider cannot serve now rather than a refusal. */
const PROVIDER_DOWN_ERRORS = new Set(['server_error', 'temporarily_unavailable']);
/** Token endpoint errors about this service's own client registration there (a configuration problem). */
const CLIENT_ERRORS = new Set(['invalid_client', 'unauthorized_client']);

/** Text the provider chose, made safe for an error_description: printable ASCII only, bounded. */
function sanitise(text: unknown, max = 200): string {
  if (typeof text !== 'string') return '';
  return text
    .replace(/[^\x20-\x7E]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim()
    .slice(0, max)
    .trim();
}

const plainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export class UpstreamIdv {
  readonly displayName: LocalizedText;
  readonly #config: UpstreamIdvConfig;
  readonly #redirectUri: string;
  /** openid-client counts in seconds */
  readonly #timeout: number;
  /** the discovered configuration; a failed discovery is forgotten so that the next call tries again */
  #discovered?: Promise<client.Configuration>;

  constructor(config: UpstreamIdvConfig, opts: { redirectUri: string; timeoutMs?: number }) {
    this.#config = config;
    this.displayName = config.displayName;
    this.#redirectUri = opts.redirectUri;
    this.#timeout = (opts.timeoutMs ?? 5000) / 1000;
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

/** The messages of an error and its causes, to tell openid-client's checks apart (never sent anywhere). */
function messages(err: unknown): string {
  const out: string[] = [];
  for (let e = err, i = 0; e instanceof Error && i < 5; e = e.cause, i++) out.push(e.message);
  return out.join(' | ');
}

/**
 * What went wrong, in plain words, from openid-client's errors. The provider's own error code and
 * description are quoted sanitised; nothing else it sent (codes, tokens, claims) is.
 */
function classify(err: unknown, step: Step): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const unavailable = (why = 'the identity provider is unavailable') => new UpstreamError('unavailable', why);
  const invalid = (why: string) => new UpstreamError('invalid', why);

  // the provider's error answer at the redirect (state already checked by openid-client)
  if (err instanceof client.AuthorizationResponseError) {
    const code = sanitise(err.error, 64) || 'an error';
    const description = sanitise(err.error_description);
    const message = `the identity provider answered ${code}${description ? `: ${description}` : ''}`;
    return new UpstreamError(PROVIDER_DOWN_ERRORS.has(err.error) ? 'unavailable' : 'refused', message);
  }
  // an OAuth error from the token or userinfo endpoint: in the body, or in a WWW-Authenticate challenge (401)
  if (err instanceof client.ResponseBodyError || err instanceof client.WWWAuthenticateChallengeError) {
    const error =
      err instanceof client.ResponseBodyError ? err.error : err.cause.find((c) => c.parameters.error)?.parameters.error;
    const code = sanitise(error, 64) || `HTTP ${err.status}`;
    if (err.status >= 500) return unavailable(`the identity provider is unavailable (HTTP ${err.status})`);
    if (step === 'token' && error && CLIENT_ERRORS.has(error))
      return unavailable(`the identity provider did not accept this service's client authentication (${code})`);
    if (step === 'token') return invalid(`the identity provider did not accept the authorization code (${code})`);
    return invalid(`the identity provider's ${step} endpoint answered ${code}`);
  }
  if (err instanceof client.ClientError) {
    const text = messages(err);
    switch (err.code) {
      case 'OAUTH_TIMEOUT':
      case 'OAUTH_ABORT':
        return unavailable('the identity provider did not answer in time');
      case 'OAUTH_HTTP_REQUEST_FORBIDDEN':
      case 'OAUTH_REQUEST_PROTOCOL_FORBIDDEN':
        return unavailable('the identity provider is not reachable over https');
      case 'OAUTH_RESPONSE_IS_NOT_CONFORM': {
        const status = err.cause instanceof Response ? err.cause.status : undefined;
        if (step === 'discovery' || status === undefined || status >= 500)
          return unavailable(`the identity provider is unavailable${status ? ` (HTTP ${status})` : ''}`);
        return invalid(`the identity provider's ${step} endpoint answered with an unexpected HTTP status (${status})`);
      }
      case 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED':
        return invalid("the identity provider's ID token has expired or is not yet valid");
      case 'OAUTH_KEY_SELECTION_FAILED':
        return invalid("the identity provider's ID token is signed with a key its JWKS does not hold");
      case 'OAUTH_JWT_CLAIM_COMPARISON_FAILED':
        if (/"nonce"/.test(text))
          return invalid("the identity provider's ID token does not carry this journey's nonce");
        if (/"aud"|"azp"/.test(text))
          return invalid("the identity provider's ID token is not meant for this service (aud)");
        if (/"iss"/.test(text)) return invalid("the identity provider's ID token was issued by another issuer (iss)");
        return invalid("the identity provider's ID token does not match this journey");
    }
    if (step === 'discovery') return unavailable("the identity provider's discovery document could not be used");
    if (/signature/i.test(text)) return invalid("the identity provider's ID token signature does not verify");
    if (/"state"/.test(text))
      return invalid('the identity provider answered with a state that does not belong to this journey');
    if (/"iss"/.test(text)) return invalid('the identity provider answered with another issuer (iss)');
    if (/"sub"/.test(text))
      return invalid("the identity provider's userinfo is about another subject than its ID token");
    return invalid(`the identity provider's answer is malformed or could not be validated`);
  }
  // fetch's own failures (connection refused, DNS, reset) are TypeErrors; openid-client's argument checks carry ERR_INVALID_ARG_*
  if (err instanceof TypeError && !String((err as { code?: unknown }).code ?? '').startsWith('ERR_INVALID_ARG'))
    return unavailable();
  if (step === 'discovery') return unavailable();
  return invalid(`the identity provider's answer is malformed or could not be validated`);
}
