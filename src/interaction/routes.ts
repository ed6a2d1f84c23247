import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { ClientConfig, Config, CredentialType, PidFlowConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { StoreUnavailableError } from '../store/redis.js';
import { ProtocolError } from '../rules/errors.js';
import { validateImages } from '../rules/images.js';
import { router } from '../http/router.js';
import { readQuery } from '../http/form.js';
import { sendPage } from '../http/page.js';
import { safeErrorDescription } from '../http/errorDescription.js';
import type { HintHolder } from '../oidc/requestChecks.js';
import type { WalletIssuer } from '../issuance/walletIssuer.js';
import type { Verifier } from '../verification/verifier.js';
import { credentialExpiry } from '../rules/validity.js';
import { renderIdentityJourneyBytes, renderPromptBytes } from './views/prompt.js';
import { qrSvg as walletQrSvg } from './views/qrSvg.js';
import { renderMessage } from './views/message.js';
import { GrantClaims, HOLDER_ACCOUNT, type FlowClaims } from '../flow/flowClaims.js';
import { stepIdOf, WalletSteps, type WalletStep } from './steps.js';
import { EXTERNAL, isIdentityScope, type IdentityScope } from '../rules/scopes.js';
import { CALLBACK_PATH, type OtherProvider } from '../identity/otherProvider.js';
import type { Journey } from '../identity/journeys.js';
import { pidOptionalClaims } from '../identity/pid.js';
import type { ExternalFlows, ExternalRequest } from '../external/flows.js';
import { CONTINUATION_PARAMS } from '../external/continue.js';
import { pageTexts, type HolderUi } from '../ui/ui.js';
import type { Say, Texts } from '../i18n/catalogues.js';
import type { MessageId } from '../i18n/en.js';
import { linkToFlow } from '../telemetry/spans.js';

export interface InteractionDeps {
  config: Config;
  store: Store;
  /** where the wallet-facing side keeps a succeeded step's claims (src/app.ts) */
  steps: WalletSteps;
  providers: Record<Version, Provider>;
  walletIssuer: WalletIssuer;
  verifier: Verifier;
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  external: ExternalFlows;
  /** D12: the identity-verification flows that are configured */
  identity: { pid?: PidFlowConfig; other?: OtherProvider };
  /** where each version's non-PAR requests are authorised: a journey continues there with context_id (D12) */
  authorizeUrls: Record<Version, string>;
  /** told of the flows that end at the prompt (metrics, src/metrics/flowEvents.ts) */
  flowEnds?: PromptFlowEnds;
  /** the holder's language and the operator's brand */
  ui?: HolderUi;
}

/** The ends of a flow the prompt decides: a request refused before its wallet step started, and a step ended as expired. */
export interface PromptFlowEnds {
  refused(stepId: string, kind: 'issuance' | 'verification' | 'identity' | 'external', clientId: string): void;
  expired(stepId: string, step: WalletStep): void;
}

type Version = 'v1' | 'v2';
type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;
type StepStatus = {
  status: 'pending' | 'scanned' | 'returning' | 'pin_retry' | 'done' | 'failed' | 'expired' | 'moved';
  message?: string;
  /** the message in catalogue words, worded in the holder's language when the page asks */
  say?: Say;
  /** failed: the relying party's error_description (kept from the browser) */
  description?: string;
  attemptsLeft?: number;
  next?: string;
  handover?: boolean;
};

/** A page of words (catalogue ids), in the holder's language. */
interface Words {
  title: MessageId;
  message: MessageId;
  values?: Record<string, string>;
}

/** D13: what the holder's browser shows when an External Client flow's wallet step is over: the app continues, not this page. */
const HANDED_OVER = {
  done: (client: string): Words => ({ title: 'message.doneTitle', message: 'message.done', values: { client } }),
  ended: (client: string): Words => ({ title: 'message.endedTitle', message: 'message.ended', values: { client } }),
};

const MOVED: Words = { title: 'message.movedTitle', message: 'progress.moved' };

// the prompt cannot tell an expired request from one never made or opened elsewhere: it claims none of them
const EXPIRED: Words = { title: 'message.expiredTitle', message: 'message.expired' };

/** The prompt's pages: the one page answer (src/http/page.ts), with its CSP. */
const page = sendPage;

/** `interaction`: the request's own `ui_locales` choose the language, before the browser's. */
function messagePage(ctx: Context, status: number, words: Words, interaction?: Interaction): void {
  const { texts, brand } = pageTexts(ctx, interaction?.params.ui_locales);
  page(ctx, status, (nonce) => renderMessage({ nonce, texts, brand, title: texts.t(words.title), message: texts.t(words.message, words.values), status, saysWhatToDo: true }));
}

/** The request's scope, as oidc-provider holds it (checked at PAR or authorise), read back into the flow it names. */
function requestedFlow(scope: string): { kind: 'issuance' | 'verification' | 'identity'; types: string[]; identity?: IdentityScope; external: boolean } {
  const all = scope.split(' ');
  const external = all.includes(EXTERNAL);
  const scopes = all.filter((s) => s && s !== 'openid' && s !== EXTERNAL);
  const identity = scopes.find(isIdentityScope);
  if (identity) return { kind: 'identity', types: [], identity, external };
  const issue = scopes.find((s) => s.startsWith('issue.'));
  return issue ? { kind: 'issuance', types: [issue.slice('issue.'.length)], external } : { kind: 'verification', types: scopes, external };
}

/** The request's parameters a continuation in another user agent is checked against and its code minted from. */
function continuationParams(params: Record<string, unknown>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of CONTINUATION_PARAMS) if (typeof params[name] === 'string') kept[name] = params[name] as string;
  if (typeof params.vc_request_uri === 'string') kept.request_uri = params.vc_request_uri;
  return kept;
}

function externalRequest(version: Version, kind: ExternalRequest['kind'], params: Record<string, unknown>): ExternalRequest {
  return { version, clientId: String(params.client_id), kind, pushed: params.vc_site === 'par', params: continuationParams(params) };
}

/** Version 1 non-PAR: the token response also carries the request's state (D3). */
const tokenExtrasOf = (params: Record<string, unknown>) => (params.vc_site === 'nonpar' && typeof params.state === 'string' ? { state: params.state } : undefined);

/** the flow's root span context, as the edge put it in the request, for the records the flow writes next. */
const flowOf = (params: Record<string, unknown>) => (typeof params.vc_trace === 'string' ? { trace: params.vc_trace } : {});

const secondsLeft = (interaction: Interaction) => Math.max(1, interaction.exp - Math.floor(Date.now() / 1000));

/**
 * The prompt (D10): the authorise step's interaction. It makes the checks the spec places at
 * authorise (template and images: PAR authorise errors, TokenHint rows), starts the wallet step (an
 * OpenID4VCI offer or an OpenID4VP request), shows it and reports progress. When the wallet step is over,
 * the holder's browser (the only one holding the interaction's cookie) finishes the interaction with
 * oidc-provider's `interactionResult` and goes back to the provider, which redirects to the client with
 * a code, or with the error.
 */
export function createInteractionRoutes(d: InteractionDeps): Middleware {
  const { config, store, steps } = d;
  const grantClaims = new GrantClaims(store);

  /** The interaction of this browser (its cookie), when it is the one the URL names. */
  async function details(ctx: Context, version: Version, uid: string): Promise<Interaction | undefined> {
    try {
      const found = await d.providers[version].interactionDetails(ctx.req, ctx.res);
      if (found.uid !== uid) return undefined;
      linkToFlow(found.params.vc_trace); // the prompt's requests join their flow
      return found;
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err; // a readable 503, not "expired"
      return undefined; // no interaction cookie, or the interaction is gone
    }
  }

  /** Ends the interaction with an error for the client (RFC 6749 §4.1.2.1), and goes back to the provider. */
  async function finishWithError(ctx: Context, version: Version, error: { error: string; error_description: string }): Promise<void> {
    // oidc-provider keeps the result with the interaction: bounded and in the RFC's characters before it does
    const result = { error: error.error, error_description: safeErrorDescription(error.error_description) };
    const returnTo = await d.providers[version].interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.status = 303;
    ctx.redirect(returnTo);
  }

  /**
   * The holder's consent to the client (the wallet step is it): a Grant for the requested scope, the ID
   * token's claims kept under it for the token endpoint (D2), and the interaction's result naming it.
   * Returns where the browser resumes the authorisation.
   */
  async function finishWithClaims(ctx: Context, version: Version, interaction: Interaction, step: WalletStep, claims: FlowClaims): Promise<string> {
    const provider = d.providers[version];
    const grant = new provider.Grant({ accountId: HOLDER_ACCOUNT, clientId: step.clientId });
    grant.addOIDCScope(String(interaction.params.scope));
    const grantId = await grant.save();
    const [, returnTo] = await Promise.all([
      grantClaims.save(grantId, { ...claims, tokenExtras: step.tokenExtras, ...flowOf(interaction.params) }, config.lifetimes.interaction),
      provider.interactionResult(
        ctx.req,
        ctx.res,
        { login: { accountId: HOLDER_ACCOUNT, remember: false }, consent: { grantId }, wallet: {} },
        { mergeWithLastSubmission: false },
      ),
    ]);
    return returnTo;
  }

  async function startIssuance(stepId: string, params: Record<string, unknown>, typeName: string, external: boolean): Promise<WalletStep> {
    const type = d.credentialTypes.get(typeName)!;
    const hint = (await store.get<HintHolder>(String(params.vc_hint)))?.hint;
    if (!hint || hint.clientId !== params.client_id) throw new ProtocolError('invalid_request', 'id_token_hint: the request has expired; start again');
    // matched against the template when the hint was verified (src/oidc/requestChecks.ts)
    if (hint.templateError !== undefined || !hint.attributes) throw new ProtocolError('invalid_scope', hint.templateError ?? 'id_token_hint: the attributes do not match the credential template');
    const { attributes, pin } = hint;
    validateImages(attributes, type); // invalid_request (spec: TokenHint image row)
    const offer = await d.walletIssuer.createOffer({
      stepId,
      clientId: String(params.client_id),
      credentialType: type.name,
      attributes,
      pin,
      serialNumber: randomUUID(), // D2: issuance sub = SerialNumber
      credentialExpiresAt: credentialExpiry(type.validity, new Date()),
      external,
      ...flowOf(params),
    });
    return {
      kind: 'issuance',
      clientId: String(params.client_id),
      credentialTypes: [type.name],
      walletUri: offer.offerUri,
      expiresAt: offer.expiresAt * 1000,
      pinLength: pin?.length,
      attributes: Object.keys(type.attributes).filter((name) => attributes[name] !== undefined),
      offerId: offer.offerId,
      ...(external ? { external } : {}),
    };
  }

  async function startVerification(stepId: string, params: Record<string, unknown>, types: string[], external: boolean, returnUri: string): Promise<WalletStep> {
    const request = await d.verifier.createRequest({ requestId: stepId, credentialTypes: types, external, returnUri, clientId: String(params.client_id), ...flowOf(params) });
    return {
      kind: 'verification',
      clientId: String(params.client_id),
      credentialTypes: types,
      walletUri: request.walletUri,
      sameDeviceUri: request.sameDeviceUri,
      expiresAt: request.expiresAt * 1000,
      tokenExtras: tokenExtrasOf(params),
      ...(external ? { external } : {}),
    };
  }

  /** D12, VerifiedIdentity: the wallet presents a PID, through the verifier, for this client's pairwise `sub`. */
  async function startPid(stepId: string, params: Record<string, unknown>, external: boolean, returnUri: string): Promise<WalletStep> {
    const clientId = String(params.client_id);
    const request = await d.verifier.createRequest({ requestId: stepId, identity: 'VerifiedIdentity', clientId, external, returnUri, ...flowOf(params) });
    return {
      kind: 'identity',
      clientId,
      credentialTypes: [],
      walletUri: request.walletUri,
      sameDeviceUri: request.sameDeviceUri,
      expiresAt: request.expiresAt * 1000,
      tokenExtras: tokenExtrasOf(params),
      ...(external ? { external } : {}),
    };
  }

  /**
   * D12, VerifiedIdentity_Other: a journey through the other provider, as long as the interaction lasts.
   * A non-PAR journey (spec: authorise `context_id`) can be continued in another browser.
   */
  async function startOther(interaction: Interaction, version: Version, stepId: string, params: Record<string, unknown>): Promise<WalletStep> {
    const other = d.identity.other!;
    const clientId = String(params.client_id);
    const journey: Journey = { stepId, version, clientId, params: continuationParams(params), tokenExtras: tokenExtrasOf(params), expiresAt: interaction.exp * 1000 };
    const pushed = params.vc_site === 'par';
    const contextId = await other.journeys.begin(journey, !pushed);
    return {
      kind: 'identity_other',
      clientId,
      credentialTypes: [],
      expiresAt: journey.expiresAt,
      ...(contextId ? { resumeUri: `${d.authorizeUrls[version]}?${new URLSearchParams({ client_id: clientId, context_id: contextId })}` } : {}),
    };
  }

  /** Starts the interaction's wallet step; a step another tab started first wins. */
  async function startStep(interaction: Interaction, version: Version, stepId: string): Promise<WalletStep> {
    const params = interaction.params as Record<string, unknown>;
    const { kind, types, identity, external } = requestedFlow(String(params.scope ?? ''));
    // OpenID4VP 1.0 §8.2: where a wallet on this device sends the browser back
    const returnUri = `${config.baseUrl}/interaction/${version}/${interaction.uid}/return`;
    const step =
      kind === 'issuance'
        ? await startIssuance(stepId, params, types[0], external)
        : identity === 'VerifiedIdentity'
          ? await startPid(stepId, params, external, returnUri)
          : identity === 'VerifiedIdentity_Other'
            ? await startOther(interaction, version, stepId, params)
            : await startVerification(stepId, params, types, external, returnUri);
    if (await steps.start(stepId, step, secondsLeft(interaction))) {
      // before the holder sees the wallet link: the flow's end is announced from here on
      if (external) await d.external.begin(stepId, externalRequest(version, kind === 'issuance' ? 'issuance' : 'verification', params), step.expiresAt);
      return step;
    }
    return (await steps.find(stepId)) ?? step;
  }

  async function stepStatus(stepId: string, step: WalletStep): Promise<StepStatus> {
    if (step.kind === 'identity_other') {
      const journey = await d.identity.other!.journeys.status(stepId);
      // the page shows one "waiting" state, at the provider or not
      return journey.status === 'at_provider' ? { status: 'pending' } : (journey as StepStatus);
    }
    return step.offerId ? d.walletIssuer.offerStatus(step.offerId, step.expiresAt / 1000) : d.verifier.requestStatus(stepId);
  }

  async function prompt(ctx: Context, version: Version, uid: string): Promise<void> {
    const found = await details(ctx, version, uid);
    if (!found) return messagePage(ctx, 400, EXPIRED);
    const stepId = stepIdOf(version, uid);
    let step = await steps.find(stepId);
    if (!step) {
      try {
        step = await startStep(found, version, stepId);
      } catch (err) {
        if (err instanceof ProtocolError) {
          const { kind, external } = requestedFlow(String(found.params.scope ?? ''));
          d.flowEnds?.refused(stepId, external ? 'external' : kind, String(found.params.client_id));
          return finishWithError(ctx, version, { error: err.error, error_description: err.description });
        }
        throw err;
      }
    }
    const client = d.clients.get(step.clientId);
    const base = `${config.baseUrl}/interaction/${version}/${uid}`;
    const view = step;
    const clientName = client?.clientName ?? view.clientId;
    const { texts, brand } = pageTexts(ctx, found.params.ui_locales);
    const clientLogoHref = d.ui?.clientLogo(view.clientId);
    if (view.kind === 'identity_other') {
      const resumeQrSvg = view.resumeUri ? walletQrSvg(view.resumeUri) : undefined;
      return page(ctx, 200, (nonce) =>
        renderIdentityJourneyBytes({
          nonce,
          texts,
          brand,
          clientLogoHref,
          clientName,
          providerName: texts.pick(d.identity.other!.displayName)!,
          startUrl: `${base}/identity`,
          resumeUri: view.resumeUri,
          resumeQrSvg,
          statusUrl: `${base}/status`,
          continueUrl: `${base}/continue`,
          expiresAt: view.expiresAt,
        }),
      );
    }
    const qrSvg = walletQrSvg(view.walletUri!);
    const pid = d.identity.pid;
    page(ctx, 200, (nonce) =>
      renderPromptBytes({
        nonce,
        texts,
        brand,
        clientLogoHref,
        kind: view.kind as 'issuance' | 'verification' | 'identity',
        clientName,
        credentialTypes:
          view.kind === 'identity' && pid
            ? [{ name: 'VerifiedIdentity', displayName: texts.pick(pid.displayName), attributes: [...pid.claims], optional: pidOptionalClaims(pid) }]
            : view.credentialTypes.map((name) => {
                const type = d.credentialTypes.get(name)!;
                // issuance: what the hint carried; verification: what is asked for. Labels from the config, in the page's language
                const labels = Object.fromEntries(Object.entries(type.attributes).flatMap(([a, spec]) => (spec.label ? [[a, texts.pick(spec.label)!]] : [])));
                if (view.attributes) return { name, displayName: texts.pick(type.displayName), attributes: view.attributes, labels };
                const names = Object.keys(type.attributes);
                return { name, displayName: texts.pick(type.displayName), attributes: names.filter((a) => type.attributes[a].required), optional: names.filter((a) => !type.attributes[a].required), labels };
              }),
        walletUri: view.sameDeviceUri ?? view.walletUri!,
        qrUri: view.walletUri!,
        qrSvg,
        pin: view.pinLength ? { length: view.pinLength } : undefined,
        statusUrl: `${base}/status`,
        continueUrl: `${base}/continue`,
        expiresAt: view.expiresAt,
        handover: view.external,
      }),
    );
  }

  /**
   * The page's progress. Once the wallet step has succeeded, the poll (which carries the interaction's
   * cookie) finishes the authorisation and names the provider's resume URL, so the browser goes there
   * directly.
   */
  async function status(ctx: Context, version: Version, uid: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const stepId = stepIdOf(version, uid);
    const [interaction, { step, claims }] = await Promise.all([details(ctx, version, uid), steps.withClaims(stepId)]);
    const { texts } = pageTexts(ctx, interaction?.params.ui_locales);
    if (!interaction || !step) {
      ctx.status = 404;
      ctx.body = { status: 'expired', message: texts.t('status.expired') };
      return;
    }
    // D13: the client continues an External Client flow; this browser only hears how the step ended
    if (step.external) {
      ctx.body = claims ? { status: 'done', handover: true } : { ...forBrowser(await stepStatus(stepId, step), texts, step), handover: true };
      return;
    }
    const result = interaction.result as { wallet?: unknown } | undefined;
    if (result?.wallet) ctx.body = { status: 'done', next: interaction.returnTo };
    else if (result) ctx.body = { status: 'failed', message: texts.t('status.notCompleted') };
    else if (claims) ctx.body = { status: 'done', next: await finishWithClaims(ctx, version, interaction, step, claims) };
    else ctx.body = forBrowser(await stepStatus(stepId, step), texts, step);
  }

  /**
   * A step's status as the holder's page reads it, its message in the holder's language: the relying
   * party's description stays on the server.
   */
  function forBrowser({ description: _, say, ...status }: StepStatus, texts: Texts, step: WalletStep): StepStatus {
    if (!say) {
      // an English message from before the catalogues: the page's own words for how it ended, nothing otherwise
      const { message, ...rest } = status;
      if (message === undefined) return status;
      return status.status === 'expired' ? { ...rest, message: texts.t('status.expired') } : status.status === 'failed' ? { ...rest, message: texts.t('progress.failedText') } : rest;
    }
    // a journey's messages name the provider in the page's language
    const values = step.kind === 'identity_other' && d.identity.other ? { ...say.values, provider: texts.pick(d.identity.other.displayName)! } : say.values;
    return { ...status, message: texts.t(say.id, values) };
  }

  /** For pages without JavaScript, failures and expiry: finishes the interaction as the wallet step ended. */
  async function continueFlow(ctx: Context, version: Version, uid: string): Promise<void> {
    const stepId = stepIdOf(version, uid);
    const [found, { step, claims }] = await Promise.all([details(ctx, version, uid), steps.withClaims(stepId)]);
    if (!found || !step) return messagePage(ctx, 400, EXPIRED, found);
    if (step.external) return handOver(ctx, found, version, uid, stepId, step, claims !== undefined);
    let returnTo = found.returnTo;
    if (!found.result) {
      if (claims) {
        returnTo = await finishWithClaims(ctx, version, found, step, claims);
      } else {
        const state = await stepStatus(stepId, step);
        // D12: a journey continued in another browser ends there; this one only hears it
        if (state.status === 'moved') return messagePage(ctx, 200, MOVED, found);
        if (state.status !== 'failed' && state.status !== 'expired' && state.status !== 'done') {
          ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}`);
          return;
        }
        // a failure was counted where it happened (the wallet's request); an expiry is seen here
        if (state.status === 'expired') d.flowEnds?.expired(stepId, step);
        const what = step.kind === 'issuance' ? 'the credential offer' : step.kind === 'identity_other' ? 'the identity check' : 'the presentation request';
        return finishWithError(ctx, version, {
          error: 'access_denied',
          error_description:
            state.status === 'expired'
              ? `${what} expired before ${step.kind === 'identity_other' ? 'it was finished' : 'the wallet answered'}`
              : state.status === 'failed'
                ? (state.description ?? state.message ?? 'the wallet step failed')
                : 'the wallet step could not be completed; start again',
        });
      }
    }
    ctx.status = 303;
    ctx.redirect(returnTo);
  }

  /**
   * Same-device (OpenID4VP 1.0 §8.2): the wallet sent this browser back with a response code. Only the
   * browser holding the interaction's cookie gets here; the code completes the step, and the flow ends as
   * `/continue` ends it.
   */
  async function returnFromWallet(ctx: Context, version: Version, uid: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const code = readQuery(ctx).response_code;
    const stepId = stepIdOf(version, uid);
    const [found, { step, claims }] = await Promise.all([details(ctx, version, uid), steps.withClaims(stepId)]);
    if (!found || !step) return messagePage(ctx, 400, EXPIRED, found);
    if (code !== undefined && !claims && !found.result && (step.kind === 'verification' || step.kind === 'identity')) await d.verifier.completeReturn(stepId, code);
    return continueFlow(ctx, version, uid);
  }

  /** D13: an External Client flow's browser is told that the app continues (or was told of the failure), never sent back to it. */
  async function handOver(ctx: Context, interaction: Interaction, version: Version, uid: string, stepId: string, step: WalletStep, succeeded: boolean): Promise<void> {
    const client = d.clients.get(step.clientId)?.clientName ?? step.clientId;
    if (succeeded) return messagePage(ctx, 200, HANDED_OVER.done(client), interaction);
    const state = await stepStatus(stepId, step);
    if (state.status !== 'failed' && state.status !== 'expired') {
      ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}`);
      return;
    }
    messagePage(ctx, 200, HANDED_OVER.ended(client), interaction);
  }

  /** D12, VerifiedIdentity_Other: the prompt's button sends its browser to the other provider. */
  async function toOtherProvider(ctx: Context, version: Version, uid: string): Promise<void> {
    const other = d.identity.other;
    const found = await details(ctx, version, uid);
    const stepId = stepIdOf(version, uid);
    const step = found && other ? await steps.find(stepId) : undefined;
    if (!other || !step || step.kind !== 'identity_other') return messagePage(ctx, 400, EXPIRED, found);
    const { status: state, journey } = await other.journeys.current(stepId);
    // ended, expired or continued elsewhere: the continue step says which
    if (!journey || (state.status !== 'pending' && state.status !== 'at_provider')) return ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}/continue`);
    const url = await other.start(ctx, journey);
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(url ?? `${config.baseUrl}/interaction/${version}/${uid}/continue`);
  }

  /** D12: `{base_url}/identity/callback`, where the other provider sends the browser back. */
  async function otherProviderCallback(ctx: Context): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const result = await d.identity.other!.callback(ctx);
    if (result.kind === 'page') return messagePage(ctx, result.status, result);
    // on by a page of ours, not a redirect: see CallbackResult
    const next = result.kind === 'prompt' ? `${config.baseUrl}/interaction/${result.version}/${result.uid}/continue` : result.url;
    ctx.set('Refresh', `0; url=${next}`);
    const { texts, brand } = pageTexts(ctx);
    page(ctx, 200, (nonce) => renderMessage({ nonce, texts, brand, title: texts.t('journey.finished'), message: texts.t('journey.takingBack'), next: { href: next, label: texts.t('progress.continue') } }));
  }

  const uid = '([A-Za-z0-9_-]{1,64})';
  const otherRoutes = d.identity.other
    ? [
        { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}/identity$`), handle: (ctx: Context, [v, id]: string[]) => toOtherProvider(ctx, v as Version, id) },
        { method: 'GET', path: CALLBACK_PATH, handle: otherProviderCallback },
      ] as const
    : [];
  return router([
    ...otherRoutes,
    { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}$`), handle: (ctx, [v, id]) => prompt(ctx, v as Version, id) },
    { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}/status$`), handle: (ctx, [v, id]) => status(ctx, v as Version, id) },
    { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}/continue$`), handle: (ctx, [v, id]) => continueFlow(ctx, v as Version, id) },
    { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}/return$`), handle: (ctx, [v, id]) => returnFromWallet(ctx, v as Version, id) },
  ]);
}
