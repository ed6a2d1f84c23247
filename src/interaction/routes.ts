import { randomUUID } from 'node:crypto';
import { randomBase64 } from '../random.js';
import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { ClientConfig, Config, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { StoreUnavailableError } from '../store/redis.js';
import { ProtocolError } from '../rules/errors.js';
import { matchTemplate } from '../rules/template.js';
import { validateImages } from '../rules/images.js';
import type { HintRecord } from '../oidc/requestChecks.js';
import type { WalletIssuer } from '../issuance/walletIssuer.js';
import type { Verifier } from '../verification/verifier.js';
import { credentialExpiry } from '../issuance/validity.js';
import { renderPromptBytes } from './views/prompt.js';
import { qrSvg as walletQrSvg } from './views/qrSvg.js';
import { renderMessage } from './views/message.js';
import { HOLDER_ACCOUNT, verificationFlowClaims, type FlowClaims } from './flowClaims.js';
import { assignId } from '../oidc/modelId.js';
import { saveGrantWithClaims } from '../oidc/grantClaims.js';
import { adapterNamespace } from '../oidc/provider.js';
import { oidcRecordKey } from '../store/oidcAdapter.js';

export interface InteractionDeps {
  config: Config;
  store: Store;
  providers: Record<Version, Provider>;
  walletIssuer: WalletIssuer;
  verifier: Verifier;
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
}

type Version = 'v1' | 'v2';
type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;
type StepStatus = { status: 'pending' | 'scanned' | 'pin_retry' | 'done' | 'failed' | 'expired'; message?: string; attemptsLeft?: number };

/**
 * What the prompt remembers about its wallet step. It is kept in the interaction itself (as its
 * `lastSubmission`, which only `interactionFinished`'s merge option reads, and we finish interactions
 * ourselves): every step that needs it reads the interaction anyway, so it costs no store operation of
 * its own. No attribute values: the ID token's claims come from the wallet step when it is done.
 */
interface WalletStep {
  kind: 'issuance' | 'verification';
  clientId: string;
  credentialTypes: string[];
  walletUri: string;
  /** epoch ms */
  expiresAt: number;
  pinLength?: number;
  /** issuance: the offer's id (its status is kept under it) */
  offerId?: string;
  /** Version 1 non-PAR: the token response also carries the request's state (D3) */
  tokenExtras?: Record<string, string>;
}

/** The interaction's wallet step, when its prompt has started one. */
function walletStepOf(interaction: Interaction): WalletStep | undefined {
  const kept = interaction.lastSubmission as { walletStep?: WalletStep } | undefined;
  return kept?.walletStep;
}

const stepId = (version: Version, uid: string) => `${version}.${uid}`;
const STEP_ID = /^(v1|v2)\.([A-Za-z0-9_-]{1,64})$/;

export interface InteractionRoutes {
  middleware: Middleware;
  /**
   * The wallet step succeeded (called from the wallet's request, before it is answered): finish the
   * authorisation now, with the ID token's sub and claims, so that the holder's page goes straight to
   * the provider's resume URL. Nothing to do once the interaction is gone or finished; a store error
   * is thrown to the caller.
   */
  walletStepDone(stepId: string, flow: FlowClaims): Promise<void>;
}

/** The store key of the record `walletStepDone` reads first (the step's interaction), for a caller that can read it ahead. */
export function stepRecordKey(stepId: string): string | undefined {
  const m = STEP_ID.exec(stepId);
  return m ? oidcRecordKey(adapterNamespace(m[1] === 'v1' ? 1 : 2), 'Interaction', m[2]) : undefined;
}

const CSP = (nonce: string) =>
  `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

const EXPIRED = {
  title: 'This link has expired',
  message: 'This request has expired or was opened in another browser. Go back to the app and start again.',
};

function page(ctx: Context, status: number, render: (nonce: string) => string | Buffer): void {
  const nonce = randomBase64(16);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', CSP(nonce));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = render(nonce);
}

function messagePage(ctx: Context, status: number, title: string, message: string): void {
  page(ctx, status, (nonce) => renderMessage({ nonce, title, message, status }));
}

/** The interaction's result, kept for the rest of the interaction's lifetime (as oidc-provider's interactionResult keeps it). */
function saveResult(interaction: Interaction, result: Record<string, unknown>): Promise<unknown> {
  interaction.result = result;
  return interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
}

/** The request's scope, as oidc-provider holds it, read back into the credential types it names. */
function requestedTypes(scope: string): { kind: 'issuance' | 'verification'; types: string[] } {
  const scopes = scope.split(' ').filter((s) => s && s !== 'openid');
  const issue = scopes.find((s) => s.startsWith('issue.'));
  return issue ? { kind: 'issuance', types: [issue.slice('issue.'.length)] } : { kind: 'verification', types: scopes };
}

/**
 * The prompt (D10): the authorise step's interaction. It makes the checks the spec places at
 * authorise (template and images: PAR authorise errors, TokenHint rows), starts the wallet step (an
 * OpenID4VCI offer or an OpenID4VP request), shows it, reports progress, and when the wallet step is over
 * returns the browser to oidc-provider, which redirects to the client with a code, or with the error.
 */
export function createInteractionRoutes(d: InteractionDeps): InteractionRoutes {
  const { config, store } = d;

  async function details(ctx: Context, version: Version, uid: string) {
    try {
      const found = await d.providers[version].interactionDetails(ctx.req, ctx.res);
      return found.uid === uid ? found : undefined;
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err; // a readable 503, not "expired"
      return undefined; // no interaction cookie, or the interaction is gone
    }
  }

  /**
   * oidc-provider's `interactionFinished` (without merging the last submission), on the interaction
   * `details` has already loaded: it would read the cookie and the interaction a second time.
   */
  async function finish(ctx: Context, interaction: Interaction, result: Record<string, unknown>): Promise<void> {
    await saveResult(interaction, result);
    resumeAt(ctx, interaction);
  }

  /** Back to the provider, which resumes the authorisation with the interaction's result. */
  function resumeAt(ctx: Context, interaction: Interaction): void {
    ctx.status = 303;
    ctx.redirect(interaction.returnTo);
  }

  /** Keeps the wallet step in the interaction, for the rest of the interaction's lifetime. */
  function saveStep(interaction: Interaction, step: WalletStep): Promise<unknown> {
    interaction.lastSubmission = { walletStep: step };
    return interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
  }

  async function startIssuance(interaction: Interaction, version: Version, params: Record<string, unknown>, typeName: string): Promise<WalletStep> {
    const type = d.credentialTypes.get(typeName)!;
    const hint = await store.get<HintRecord>(String(params.vc_hint));
    if (!hint || hint.clientId !== params.client_id) throw new ProtocolError('invalid_request', 'id_token_hint: the request has expired; start again');
    const { attributes, pin } = hint;
    matchTemplate(attributes, type); // invalid_scope (spec: TokenHint claims row)
    validateImages(attributes, type); // invalid_request (spec: TokenHint image row)
    let step: WalletStep | undefined;
    // the step is saved in the same round trip as the offer's records
    await d.walletIssuer.createOffer(
      {
        stepId: stepId(version, interaction.uid),
        credentialType: type.name,
        attributes,
        pin,
        serialNumber: randomUUID(), // D2: issuance sub = SerialNumber
        credentialExpiresAt: credentialExpiry(type.validity, new Date()),
      },
      (offer) => {
        step = {
          kind: 'issuance',
          clientId: String(params.client_id),
          credentialTypes: [type.name],
          walletUri: offer.offerUri,
          expiresAt: offer.expiresAt * 1000,
          pinLength: pin?.length,
          offerId: offer.offerId,
        };
        return saveStep(interaction, step);
      },
    );
    return step!;
  }

  async function startVerification(interaction: Interaction, version: Version, params: Record<string, unknown>, types: string[]): Promise<WalletStep> {
    const request = await d.verifier.createRequest({ requestId: stepId(version, interaction.uid), credentialTypes: types });
    const step: WalletStep = {
      kind: 'verification',
      clientId: String(params.client_id),
      credentialTypes: types,
      walletUri: request.walletUri,
      expiresAt: request.expiresAt * 1000,
      tokenExtras: params.vc_site === 'nonpar' && typeof params.state === 'string' ? { state: params.state } : undefined,
    };
    await saveStep(interaction, step);
    return step;
  }

  function stepStatus(version: Version, uid: string, step: WalletStep): Promise<StepStatus> {
    return step.offerId ? d.walletIssuer.offerStatus(step.offerId, step.expiresAt / 1000) : d.verifier.requestStatus(stepId(version, uid));
  }

  /**
   * The holder's consent to the client (the wallet step is it), carrying the ID token's claims for the
   * token endpoint (D2), saved with the interaction's result that names it: independent writes, issued
   * together (one round trip on Redis).
   */
  async function finishWith(version: Version, interaction: Interaction, step: WalletStep, flow: FlowClaims): Promise<void> {
    const grant = new d.providers[version].Grant({ accountId: HOLDER_ACCOUNT, clientId: step.clientId });
    grant.addOIDCScope(String(interaction.params.scope));
    const grantId = assignId(grant);
    await Promise.all([saveGrantWithClaims(grant, { ...flow, tokenExtras: step.tokenExtras }), saveResult(interaction, walletResult(grantId))]);
  }

  const walletResult = (grantId: string) => ({ login: { accountId: HOLDER_ACCOUNT, remember: false }, consent: { grantId }, wallet: true });

  async function walletStepDone(id: string, flow: FlowClaims): Promise<void> {
    const m = STEP_ID.exec(id);
    if (!m) return;
    const [, version, uid] = m as unknown as [string, Version, string];
    const interaction = await d.providers[version].Interaction.find(uid);
    const step = interaction && walletStepOf(interaction);
    if (!interaction || !step || interaction.result) return;
    await finishWith(version, interaction, step, flow);
  }

  async function prompt(ctx: Context, version: Version, uid: string): Promise<void> {
    const found = await details(ctx, version, uid);
    if (!found) return messagePage(ctx, 400, EXPIRED.title, EXPIRED.message);
    let step = walletStepOf(found);
    if (!step) {
      const params = found.params as Record<string, unknown>;
      const { kind, types } = requestedTypes(String(params.scope ?? ''));
      try {
        step = kind === 'issuance' ? await startIssuance(found, version, params, types[0]) : await startVerification(found, version, params, types);
      } catch (err) {
        if (err instanceof ProtocolError) return finish(ctx, found, { error: err.error, error_description: err.description });
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
      }),
    );
  }

  /** The page's progress (no interaction cookie needed: it reveals no more than the page shows). */
  async function status(ctx: Context, version: Version, uid: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const interaction = await d.providers[version].Interaction.find(uid);
    const step = interaction && walletStepOf(interaction);
    if (!interaction || !step) {
      ctx.status = 404;
      ctx.body = { status: 'expired', message: 'This request has expired. Go back to the app and start again.' };
      return;
    }
    const result = interaction.result as { wallet?: boolean } | undefined;
    // finished: the wallet step's result is for the provider's resume; an error result is the continue step's
    if (result?.wallet) ctx.body = { status: 'done', next: interaction.returnTo };
    else if (result) ctx.body = { status: 'failed', message: 'This request did not complete. Go back to the app and start again.' };
    else ctx.body = await stepStatus(version, uid, step);
  }

  async function continueFlow(ctx: Context, version: Version, uid: string): Promise<void> {
    const found = await details(ctx, version, uid);
    const step = found && walletStepOf(found);
    if (!found || !step) return messagePage(ctx, 400, EXPIRED.title, EXPIRED.message);
    if (found.result) return resumeAt(ctx, found);
    const state = await stepStatus(version, uid, step);
    if (state.status === 'failed' || state.status === 'expired') {
      const what = step.kind === 'issuance' ? 'the credential offer' : 'the presentation request';
      return finish(ctx, found, {
        error: 'access_denied',
        error_description: state.status === 'expired' ? `${what} expired before the wallet answered` : (state.message ?? 'the wallet step failed'),
      });
    }
    if (state.status !== 'done') {
      ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}`);
      return;
    }
    // done, yet the wallet's request did not finish the authorisation: a verification's result is kept
    // for this; an issuance's offer shows done only once its credential request has finished it
    const verified = step.kind === 'verification' ? await d.verifier.result(stepId(version, uid)) : undefined;
    if (!verified) return finish(ctx, found, { error: 'access_denied', error_description: 'the wallet step could not be completed; start again' });
    await finishWith(version, found, step, verificationFlowClaims(verified));
    resumeAt(ctx, found);
  }

  const pattern = /^\/interaction\/(v1|v2)\/([A-Za-z0-9_-]{1,64})(\/status|\/continue)?$/;
  // not async: a request for another path passes on without a promise of its own
  const middleware: Middleware = function interactionRoutes(ctx, next) {
    const m = pattern.exec(ctx.path);
    if (!m) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET');
      return Promise.resolve();
    }
    const [, version, uid, action] = m as unknown as [string, Version, string, string | undefined];
    if (action === '/status') return status(ctx, version, uid);
    if (action === '/continue') return continueFlow(ctx, version, uid);
    return prompt(ctx, version, uid);
  };
  return { middleware, walletStepDone };
}
