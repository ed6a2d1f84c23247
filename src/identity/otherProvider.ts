import { createHash, randomBytes } from 'node:crypto';
import { ENGLISH, say, type LocalizedText, type Say } from '../i18n/catalogues.js';
import type { MessageId } from '../i18n/en.js';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import type { UpstreamIdvConfig } from '../config/schema.js';
import { errorRedirectUrl, noStore, redirectError } from '../http/respond.js';
import { ProtocolError } from '../rules/errors.js';
import type { FlowClaims, GrantClaims } from '../flow/flowClaims.js';
import type { WalletSteps } from '../interaction/steps.js';
import { checkContinuationParams, mintContinuationCode } from '../external/continue.js';
import { Journeys, type Journey } from './journeys.js';
import { UpstreamError, UpstreamIdv, type UpstreamIdentity } from './upstream.js';
import type { PairwiseSubjects } from './subject.js';
import type { VersionProfile } from '../oidc/versions.js';
import type { OutboundFetch } from '../http/outboundFetch.js';

export interface OtherProviderDeps {
  config: UpstreamIdvConfig;
  baseUrl: string;
  store: Store;
  lifetimes: { continuation: number; interaction: number };
  subjects: PairwiseSubjects;
  steps: WalletSteps;
  grantClaims: GrantClaims;
  providers: Record<VersionProfile['id'], Provider>;
  logger: Logger;
  /** for tests: the upstream client */
  upstream?: UpstreamIdv;
  /** the rules the provider's requests are held to (src/http/outboundFetch.ts) */
  outbound?: OutboundFetch;
  /** told of each journey's one outcome (metrics, audit); `denied`: the provider answered an error such as access_denied */
  onEnded?: (journey: Journey, outcome: 'completed' | 'failed' | 'denied') => void;
}

/**
 * What the callback made of the provider's answer, for the holder's browser. The browser arrives in a
 * chain of redirects that began with a form post at the provider, and Chromium applies the provider's
 * CSP `form-action` to every redirect of that chain: the browser is sent on by a page of ours instead.
 */
export type CallbackResult =
  /** the journey's first browser: its prompt's /continue finishes the interaction (claims kept, or the failure) */
  | { kind: 'prompt'; version: VersionProfile['id']; uid: string }
  /** a browser that continued the journey: on to the client (code or error) */
  | { kind: 'client'; url: string }
  /** nothing to finish here: a page tells the person why */
  | { kind: 'page'; status: number; title: MessageId; message: MessageId };

/** The callback's path under the base URL (D12: `{base_url}/identity/callback`). */
export const CALLBACK_PATH = '/identity/callback';
/** A browser's binding cookie for one journey's logins: `idv.<stepId>`. */
const COOKIE_PREFIX = 'idv.';
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;
/** A browser carrying more journey cookies than this is not looked at further. */
const MAX_COOKIES = 8;

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

const PAGES = {
  unmatched: { status: 400, title: 'journey.unmatchedTitle', message: 'journey.unmatched' },
  unknownState: { status: 400, title: 'journey.unmatchedTitle', message: 'journey.unknownState' },
  moved: { status: 200, title: 'message.movedTitle', message: 'progress.moved' },
  ended: { status: 200, title: 'journey.endedTitle', message: 'journey.ended' },
} as const;

/**
 * D12, VerifiedIdentity_Other: the journey through another OpenID Connect provider. The holder's prompt
 * sends the browser there (`leave`), the provider sends it back to the callback, and the journey ends
 * with the provider's claims mapped into our ID token, with a pairwise `sub` from the provider's `iss`
 * and `sub`. A non-PAR journey can be continued in another browser with its context_id (`resume`): that
 * browser goes to the provider and, when it comes back, on to the client with a code.
 */
export class OtherProvider {
  readonly journeys: Journeys;
  readonly upstream: UpstreamIdv;
  readonly displayName: LocalizedText;
  readonly #secureCookies: boolean;
  readonly #cookiePath: string;

  constructor(private readonly d: OtherProviderDeps) {
    this.journeys = new Journeys(d.store, d.lifetimes);
    this.upstream =
      d.upstream ?? new UpstreamIdv(d.config, { redirectUri: `${d.baseUrl}${CALLBACK_PATH}`, outbound: d.outbound });
    this.displayName = d.config.displayName;
    const base = new URL(d.baseUrl);
    this.#secureCookies = base.protocol === 'https:';
    this.#cookiePath = `${base.pathname.replace(/\/$/, '')}${CALLBACK_PATH}`;
  }

  /**
   * The holder's prompt sends its browser to the provider. Returns the provider's URL, or undefined when
   * the provider cannot be reached: the journey then ends failed, and the prompt finishes with it.
   */
  async start(ctx: Context, journey: Journey): Promise<string | undefined> {
    try {
      return await this.#leave(ctx, journey, false);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      await this.#fail(journey, err, false);
      return undefined;
    }
  }

  /**
   * D12: authorise with `context_id` continues a non-PAR journey in this browser, which goes to the
   * provider from here. False when the context_id is not a journey's (the caller tries External Client
   * flows, D13). Replayed, expired or foreign context_ids: 400 invalid_request. The request may repeat
   * the original's parameters (they must equal it), nothing else.
   */
  async resumes(ctx: Context, params: Record<string, string>, version: VersionProfile['id']): Promise<boolean> {
    const stepId = await this.journeys.contextStep(params.context_id);
    if (stepId === undefined) return false;
    const journey = await this.journeys.resume(params.context_id, stepId, params.client_id ?? '', version, (j) =>
      checkContinuationParams(params, { pushed: false, params: j.params }),
    );
    let url: string;
    try {
      url = await this.#leave(ctx, journey, true);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      await this.#fail(journey, err, true);
      redirectError(
        ctx,
        journey.params.redirect_uri,
        accessDenied(err),
        journey.params.state,
        this.d.providers[journey.version].issuer,
      );
      return true;
    }
    noStore(ctx);
    ctx.status = 303;
    ctx.redirect(url);
    return true;
  }

  async #fail(journey: Journey, err: UpstreamError, resumed: boolean): Promise<void> {
    // the reason and the step, never a claim value (UpstreamError's messages carry none)
    this.d.logger.info(
      { flow: 'VerifiedIdentity_Other', step: journey.stepId, reason: err.reason, description: err.message },
      'identity journey failed',
    );
    const message = personMessage(err.reason);
    const english = ENGLISH.say({ ...message, values: { provider: ENGLISH.pick(this.displayName)! } });
    if (
      await this.journeys.end(
        journey,
        { status: 'failed', message: english, say: message, description: err.message },
        resumed,
      )
    ) {
      this.d.onEnded?.(journey, err.reason === 'refused' ? 'denied' : 'failed');
    }
  }

  /**
   * Sends a browser to the provider for `journey`: a login (state, nonce, PKCE) kept for the callback,
   * and a cookie that binds its answer to this browser. Returns the provider's authorization URL; throws
   * UpstreamError when the provider cannot be reached.
   */
  async #leave(ctx: Context, journey: Journey, resumed: boolean): Promise<string> {
    const start = await this.upstream.start();
    const name = `${COOKIE_PREFIX}${journey.stepId}`;
    const held = ctx.cookies.get(name, { signed: false });
    const binding = held && COOKIE_VALUE.test(held) ? held : randomBytes(32).toString('base64url');
    await this.journeys.leave(journey, {
      state: start.state,
      nonce: start.nonce,
      codeVerifier: start.codeVerifier,
      binding: sha256(binding),
      resumed,
    });
    ctx.cookies.set(name, binding, {
      httpOnly: true,
      sameSite: 'lax', // the provider's redirect back is a top-level GET navigation from its site
      secure: this.#secureCookies,
      path: this.#cookiePath,
      maxAge: Math.max(1000, journey.expiresAt - Date.now()),
      signed: false, // 256 random bits whose hash the login keeps: nothing to forge
      overwrite: true,
    });
    return start.url;
  }

  /**
   * `{base_url}/identity/callback`: the provider's answer. The login is found by this browser's journey
   * cookies and the answer's state, and must have been made by this browser (its binding cookie); only
   * then is it taken (once). An answer whose state none of them knows changes nothing (RFC 9700 §4.7):
   * any site can send a holder's browser here with a state of its choosing, so an unknown state is
   * never read as the journey's answer.
   */
  async callback(ctx: Context): Promise<CallbackResult> {
    const url = new URL(ctx.originalUrl, this.d.baseUrl);
    const state = url.searchParams.get('state') ?? '';
    if (state) {
      for (const stepId of journeyCookies(ctx.get('Cookie'))) {
        const login = await this.journeys.findLogin(stepId, state);
        const binding = ctx.cookies.get(`${COOKIE_PREFIX}${stepId}`, { signed: false });
        // another browser's trip of the same journey (continued with context_id) stays that browser's
        if (!login || !binding || sha256(binding) !== login.binding) continue;
        // of concurrent answers with this state one takes the login; the others hear it was used
        if (!(await this.journeys.takeLogin(stepId, state))) return { kind: 'page', ...PAGES.unmatched };
        const journey = await this.journeys.find(stepId);
        if (!journey) return { kind: 'page', ...PAGES.unmatched };
        return this.#answered(ctx, journey, login.resumed, () => this.upstream.finish(url, login));
      }
    }
    this.d.logger.info(
      { flow: 'VerifiedIdentity_Other' },
      'identity callback refused: its state belongs to no trip of this browser',
    );
    return { kind: 'page', ...PAGES.unknownState };
  }

  async #answered(
    ctx: Context,
    journey: Journey,
    resumed: boolean,
    finish: () => Promise<UpstreamIdentity>,
  ): Promise<CallbackResult> {
    const [, uid] = journey.stepId.split('.');
    const status = await this.journeys.status(journey.stepId);
    if (!resumed && status.status === 'moved') return { kind: 'page', ...PAGES.moved };
    if (status.status === 'done' || status.status === 'failed' || status.status === 'expired')
      return { kind: 'page', ...PAGES.ended };

    const provider = this.d.providers[journey.version];
    let claims: FlowClaims;
    try {
      claims = this.#flowClaims(journey, await finish());
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      await this.#fail(journey, err, resumed);
      if (!resumed) return { kind: 'prompt', version: journey.version, uid };
      return {
        kind: 'client',
        url: errorRedirectUrl(journey.params.redirect_uri, accessDenied(err), journey.params.state, provider.issuer),
      };
    }
    // the first browser's prompt finishes with the claims kept beside its step
    const keepClaims = resumed
      ? undefined
      : () => this.d.steps.succeeded(journey.stepId, claims, this.d.lifetimes.interaction);
    if (!(await this.journeys.end(journey, { status: 'done' }, resumed, keepClaims)))
      return { kind: 'page', ...PAGES.ended };
    this.d.onEnded?.(journey, 'completed');
    if (!resumed) return { kind: 'prompt', version: journey.version, uid };
    // a continuing browser has no interaction: it goes to the client, as the first browser would have
    return {
      kind: 'client',
      url: await mintContinuationCode(
        provider,
        this.d.grantClaims,
        { request: journey, claims: { ...claims, tokenExtras: journey.tokenExtras } },
        this.d.lifetimes.interaction,
      ),
    };
  }

  /** D12: the provider's claims as configured, and a pairwise `sub` from its `iss` and `sub`. */
  #flowClaims(journey: Journey, identity: UpstreamIdentity): FlowClaims {
    return {
      sub: this.d.subjects.of(journey.clientId, ['idv', identity.issuer, identity.subject]),
      claims: identity.claims,
    };
  }
}

/** What the client hears of a failed journey. */
const accessDenied = (err: UpstreamError) => new ProtocolError('access_denied', err.message);

/** What the prompt tells the person when the provider's part failed (no protocol jargon); the page names the provider in its language. */
function personMessage(reason: UpstreamError['reason']): Say {
  return say(
    reason === 'unavailable' ? 'journey.unavailable' : reason === 'refused' ? 'journey.refused' : 'journey.invalid',
  );
}

/** The step ids of the browser's journey cookies (`idv.<stepId>`), read from the header (their names are not known in advance). */
function journeyCookies(header: string): string[] {
  const found: string[] = [];
  for (const part of header.split(';')) {
    const name = part.split('=')[0]?.trim() ?? '';
    if (!name.startsWith(COOKIE_PREFIX)) continue;
    const stepId = name.slice(COOKIE_PREFIX.length);
    if (/^v[12]\.[A-Za-z0-9_-]{1,64}$/.test(stepId)) found.push(stepId);
    if (found.length >= MAX_COOKIES) break;
  }
  return found;
}
