import { randomUUID } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { ClientConfig, Config, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { StoreUnavailableError } from '../store/redis.js';
import { ProtocolError } from '../rules/errors.js';
import { validateImages } from '../rules/images.js';
import { router } from '../http/router.js';
import { sendPage } from '../http/page.js';
import type { HintHolder } from '../oidc/requestChecks.js';
import type { WalletIssuer } from '../issuance/walletIssuer.js';
import type { Verifier } from '../verification/verifier.js';
import { credentialExpiry } from '../issuance/validity.js';
import { renderPromptBytes } from './views/prompt.js';
import { qrSvg as walletQrSvg } from './views/qrSvg.js';
import { renderMessage } from './views/message.js';
import { GrantClaims, HOLDER_ACCOUNT, type FlowClaims } from './flowClaims.js';
import { stepIdOf, WalletSteps, type WalletStep } from './steps.js';
import { EXTERNAL } from '../rules/scopes.js';
import type { ExternalFlows, ExternalRequest } from '../external/flows.js';
import { CONTINUATION_PARAMS } from '../external/continue.js';

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
}

type Version = 'v1' | 'v2';
type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;
type StepStatus = { status: 'pending' | 'scanned' | 'pin_retry' | 'done' | 'failed' | 'expired'; message?: string; attemptsLeft?: number; next?: string; handover?: boolean };

/** D13: what the holder's browser shows when an External Client flow's wallet step is over: the app continues, not this page. */
const HANDED_OVER = {
  done: (client: string) => ({ title: 'All done', message: `${client} will continue from here. You can close this page.` }),
  ended: (client: string) => ({ title: 'This request did not complete', message: `${client} has been told. You can close this page.` }),
};

const EXPIRED = {
  title: 'This link has expired',
  message: 'This request has expired or was opened in another browser. Go back to the app and start again.',
};

/** The prompt's pages: the one page answer (src/http/page.ts), with its CSP. */
const page = sendPage;

function messagePage(ctx: Context, status: number, title: string, message: string): void {
  page(ctx, status, (nonce) => renderMessage({ nonce, title, message, status }));
}

/** The request's scope, as oidc-provider holds it, read back into the credential types it names. */
function requestedTypes(scope: string): { kind: 'issuance' | 'verification'; types: string[]; external: boolean } {
  const all = scope.split(' ');
  const external = all.includes(EXTERNAL);
  const scopes = all.filter((s) => s && s !== 'openid' && s !== EXTERNAL);
  const issue = scopes.find((s) => s.startsWith('issue.'));
  return issue ? { kind: 'issuance', types: [issue.slice('issue.'.length)], external } : { kind: 'verification', types: scopes, external };
}

function externalRequest(version: Version, kind: 'issuance' | 'verification', params: Record<string, unknown>): ExternalRequest {
  const kept: Record<string, string> = {};
  for (const name of CONTINUATION_PARAMS) if (typeof params[name] === 'string') kept[name] = params[name] as string;
  if (typeof params.vc_request_uri === 'string') kept.request_uri = params.vc_request_uri;
  return { version, clientId: String(params.client_id), kind, pushed: params.vc_site === 'par', params: kept };
}

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
      return found.uid === uid ? found : undefined;
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err; // a readable 503, not "expired"
      return undefined; // no interaction cookie, or the interaction is gone
    }
  }

  /** Ends the interaction with an error for the client (RFC 6749 §4.1.2.1), and goes back to the provider. */
  async function finishWithError(ctx: Context, version: Version, error: { error: string; error_description: string }): Promise<void> {
    const returnTo = await d.providers[version].interactionResult(ctx.req, ctx.res, error, { mergeWithLastSubmission: false });
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
      grantClaims.save(grantId, { ...claims, tokenExtras: step.tokenExtras }, config.lifetimes.interaction),
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
      credentialType: type.name,
      attributes,
      pin,
      serialNumber: randomUUID(), // D2: issuance sub = SerialNumber
      credentialExpiresAt: credentialExpiry(type.validity, new Date()),
      external,
    });
    return {
      kind: 'issuance',
      clientId: String(params.client_id),
      credentialTypes: [type.name],
      walletUri: offer.offerUri,
      expiresAt: offer.expiresAt * 1000,
      pinLength: pin?.length,
      offerId: offer.offerId,
      ...(external ? { external } : {}),
    };
  }

  async function startVerification(stepId: string, params: Record<string, unknown>, types: string[], external: boolean): Promise<WalletStep> {
    const request = await d.verifier.createRequest({ requestId: stepId, credentialTypes: types, external });
    return {
      kind: 'verification',
      clientId: String(params.client_id),
      credentialTypes: types,
      walletUri: request.walletUri,
      expiresAt: request.expiresAt * 1000,
      tokenExtras: params.vc_site === 'nonpar' && typeof params.state === 'string' ? { state: params.state } : undefined,
      ...(external ? { external } : {}),
    };
  }

  /** Starts the interaction's wallet step; a step another tab started first wins. */
  async function startStep(interaction: Interaction, version: Version, stepId: string): Promise<WalletStep> {
    const params = interaction.params as Record<string, unknown>;
    const { kind, types, external } = requestedTypes(String(params.scope ?? ''));
    const step = kind === 'issuance' ? await startIssuance(stepId, params, types[0], external) : await startVerification(stepId, params, types, external);
    if (await steps.start(stepId, step, secondsLeft(interaction))) {
      // before the holder sees the wallet link: the flow's end is announced from here on
      if (external) await d.external.begin(stepId, externalRequest(version, kind, params), step.expiresAt);
      return step;
    }
    return (await steps.find(stepId)) ?? step;
  }

  function stepStatus(stepId: string, step: WalletStep): Promise<StepStatus> {
    return step.offerId ? d.walletIssuer.offerStatus(step.offerId, step.expiresAt / 1000) : d.verifier.requestStatus(stepId);
  }

  async function prompt(ctx: Context, version: Version, uid: string): Promise<void> {
    const found = await details(ctx, version, uid);
    if (!found) return messagePage(ctx, 400, EXPIRED.title, EXPIRED.message);
    const stepId = stepIdOf(version, uid);
    let step = await steps.find(stepId);
    if (!step) {
      try {
        step = await startStep(found, version, stepId);
      } catch (err) {
        if (err instanceof ProtocolError) return finishWithError(ctx, version, { error: err.error, error_description: err.description });
        throw err;
      }
    }
    const client = d.clients.get(step.clientId);
    const qrSvg = walletQrSvg(step.walletUri);
    const base = `${config.baseUrl}/interaction/${version}/${uid}`;
    const view = step;
    page(ctx, 200, (nonce) =>
      renderPromptBytes({
        nonce,
        kind: view.kind,
        clientName: client?.clientName ?? view.clientId,
        credentialTypes: view.credentialTypes.map((name) => {
          const type = d.credentialTypes.get(name)!;
          return { name, displayName: type.displayName, attributes: Object.keys(type.attributes) };
        }),
        walletUri: view.walletUri,
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
    if (!interaction || !step) {
      ctx.status = 404;
      ctx.body = { status: 'expired', message: 'This request has expired. Go back to the app and start again.' };
      return;
    }
    // D13: the client continues an External Client flow; this browser only hears how the step ended
    if (step.external) {
      ctx.body = claims ? { status: 'done', handover: true } : { ...(await stepStatus(stepId, step)), handover: true };
      return;
    }
    const result = interaction.result as { wallet?: unknown } | undefined;
    if (result?.wallet) ctx.body = { status: 'done', next: interaction.returnTo };
    else if (result) ctx.body = { status: 'failed', message: 'This request did not complete. Go back to the app and start again.' };
    else if (claims) ctx.body = { status: 'done', next: await finishWithClaims(ctx, version, interaction, step, claims) };
    else ctx.body = await stepStatus(stepId, step);
  }

  /** For pages without JavaScript, failures and expiry: finishes the interaction as the wallet step ended. */
  async function continueFlow(ctx: Context, version: Version, uid: string): Promise<void> {
    const stepId = stepIdOf(version, uid);
    const [found, { step, claims }] = await Promise.all([details(ctx, version, uid), steps.withClaims(stepId)]);
    if (!found || !step) return messagePage(ctx, 400, EXPIRED.title, EXPIRED.message);
    if (step.external) return handOver(ctx, version, uid, stepId, step, claims !== undefined);
    let returnTo = found.returnTo;
    if (!found.result) {
      if (claims) {
        returnTo = await finishWithClaims(ctx, version, found, step, claims);
      } else {
        const state = await stepStatus(stepId, step);
        if (state.status !== 'failed' && state.status !== 'expired' && state.status !== 'done') {
          ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}`);
          return;
        }
        const what = step.kind === 'issuance' ? 'the credential offer' : 'the presentation request';
        return finishWithError(ctx, version, {
          error: 'access_denied',
          error_description:
            state.status === 'expired'
              ? `${what} expired before the wallet answered`
              : state.status === 'failed'
                ? (state.message ?? 'the wallet step failed')
                : 'the wallet step could not be completed; start again',
        });
      }
    }
    ctx.status = 303;
    ctx.redirect(returnTo);
  }

  /** D13: an External Client flow's browser is told that the app continues (or was told of the failure), never sent back to it. */
  async function handOver(ctx: Context, version: Version, uid: string, stepId: string, step: WalletStep, succeeded: boolean): Promise<void> {
    const client = d.clients.get(step.clientId)?.clientName ?? step.clientId;
    if (succeeded) {
      const { title, message } = HANDED_OVER.done(client);
      return messagePage(ctx, 200, title, message);
    }
    const state = await stepStatus(stepId, step);
    if (state.status !== 'failed' && state.status !== 'expired') {
      ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}`);
      return;
    }
    const { title, message } = HANDED_OVER.ended(client);
    messagePage(ctx, 200, title, message);
  }

  const uid = '([A-Za-z0-9_-]{1,64})';
  return router([
    { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}$`), handle: (ctx, [v, id]) => prompt(ctx, v as Version, id) },
    { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}/status$`), handle: (ctx, [v, id]) => status(ctx, v as Version, id) },
    { method: 'GET', path: new RegExp(`^/interaction/(v1|v2)/${uid}/continue$`), handle: (ctx, [v, id]) => continueFlow(ctx, v as Version, id) },
  ]);
}
