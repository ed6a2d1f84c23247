import { randomBytes, randomUUID } from 'node:crypto';
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
import type { Verifier, VerificationResult } from '../verification/verifier.js';
import { credentialExpiry } from '../issuance/validity.js';
import { renderPrompt } from './views/prompt.js';
import { qrSvg as walletQrSvg } from './views/qrSvg.js';
import { renderMessage } from './views/message.js';
import { flowClaimsKey, HOLDER_ACCOUNT, type FlowClaims } from './flowClaims.js';
import { assignId } from '../oidc/modelId.js';

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

/** What the prompt remembers about its wallet step, keyed by the interaction. */
interface PromptRecord {
  kind: 'issuance' | 'verification';
  clientId: string;
  credentialTypes: string[];
  walletUri: string;
  expiresAt: number;
  pinLength?: number;
  /** issuance: the ID token's sub and claims are known when the offer is made */
  flow?: FlowClaims;
  /** Version 1 non-PAR: the token response also carries the request's state (D3) */
  tokenExtras?: Record<string, string>;
  /** set once the wallet step has finished the authorisation: where the browser goes next (the provider's resume) */
  resumeUrl?: string;
}

const promptKey = (version: Version, uid: string) => `prompt:${version}:${uid}`;
const stepId = (version: Version, uid: string) => `${version}.${uid}`;
const STEP_ID = /^(v1|v2)\.([A-Za-z0-9_-]{1,64})$/;

export interface InteractionRoutes {
  middleware: Middleware;
  /**
   * The wallet step succeeded (called from the wallet's request, before the step shows `done`): finish
   * the authorisation now, so that the holder's page goes straight to the provider's resume URL. Best
   * effort: when it cannot, the page's continue step does it.
   */
  walletStepDone(stepId: string, verified?: VerificationResult): Promise<void>;
}

const CSP = (nonce: string) =>
  `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

const EXPIRED = {
  title: 'This link has expired',
  message: 'This request has expired or was opened in another browser. Go back to the app and start again.',
};

function page(ctx: Context, status: number, render: (nonce: string) => string): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', CSP(nonce));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = render(nonce);
}

function messagePage(ctx: Context, status: number, title: string, message: string): void {
  page(ctx, status, (nonce) => renderMessage({ nonce, title, message, status }));
}

/** The ID token's sub and claims (D2): known since the offer for issuance, from the presentation for verification. */
function flowFrom(record: PromptRecord, verified: VerificationResult | undefined): FlowClaims | undefined {
  if (record.flow) return { ...record.flow, tokenExtras: record.tokenExtras };
  return verified && { sub: verified.holderKeyThumbprint, claims: verified.claims, tokenExtras: record.tokenExtras };
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

  async function startIssuance(version: Version, uid: string, params: Record<string, unknown>, typeName: string): Promise<PromptRecord> {
    const type = d.credentialTypes.get(typeName)!;
    const hint = await store.get<HintRecord>(String(params.vc_hint));
    if (!hint || hint.clientId !== params.client_id) throw new ProtocolError('invalid_request', 'id_token_hint: the request has expired; start again');
    const { attributes, pin } = hint;
    matchTemplate(attributes, type); // invalid_scope (spec: TokenHint claims row)
    validateImages(attributes, type); // invalid_request (spec: TokenHint image row)
    const serialNumber = randomUUID();
    const expiresAt = credentialExpiry(type.validity, new Date());
    const offer = await d.walletIssuer.createOffer({
      offerId: stepId(version, uid),
      credentialType: type.name,
      attributes,
      pin,
      serialNumber,
      credentialExpiresAt: expiresAt,
    });
    return {
      kind: 'issuance',
      clientId: String(params.client_id),
      credentialTypes: [type.name],
      walletUri: offer.offerUri,
      expiresAt: offer.expiresAt * 1000,
      pinLength: pin?.length,
      flow: {
        sub: serialNumber, // D2: issuance sub = SerialNumber
        claims: { ...attributes, SerialNumber: serialNumber, ExpiresAt: expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z') },
      },
    };
  }

  async function startVerification(version: Version, uid: string, params: Record<string, unknown>, types: string[]): Promise<PromptRecord> {
    const request = await d.verifier.createRequest({ requestId: stepId(version, uid), credentialTypes: types });
    return {
      kind: 'verification',
      clientId: String(params.client_id),
      credentialTypes: types,
      walletUri: request.walletUri,
      expiresAt: request.expiresAt * 1000,
      tokenExtras: params.vc_site === 'nonpar' && typeof params.state === 'string' ? { state: params.state } : undefined,
    };
  }

  function stepStatus(version: Version, uid: string, record: PromptRecord): Promise<StepStatus> {
    return record.kind === 'issuance' ? d.walletIssuer.offerStatus(stepId(version, uid)) : d.verifier.requestStatus(stepId(version, uid));
  }

  /** The ID token's sub and claims once the wallet step is done (D2). */
  async function flowOf(version: Version, uid: string, record: PromptRecord): Promise<FlowClaims | undefined> {
    return flowFrom(record, record.flow ? undefined : await d.verifier.result(stepId(version, uid)));
  }

  /**
   * The holder's consent to the client (the wallet step is it) and the ID token's claims for the token
   * endpoint (D2), saved with the interaction's result that names them: independent writes, issued
   * together (one round trip on Redis).
   */
  async function finishWith(version: Version, interaction: Interaction, clientId: string, flow: FlowClaims): Promise<void> {
    const grant = new d.providers[version].Grant({ accountId: HOLDER_ACCOUNT, clientId });
    grant.addOIDCScope(String(interaction.params.scope));
    const grantId = assignId(grant);
    await Promise.all([
      grant.save(),
      store.set(flowClaimsKey(version, grantId), flow, config.lifetimes.code + config.lifetimes.token),
      saveResult(interaction, walletResult(grantId)),
    ]);
  }

  const walletResult = (grantId: string) => ({ login: { accountId: HOLDER_ACCOUNT, remember: false }, consent: { grantId }, wallet: true });

  async function walletStepDone(id: string, verified?: VerificationResult): Promise<void> {
    const m = STEP_ID.exec(id);
    if (!m) return;
    const [, version, uid] = m as unknown as [string, Version, string];
    try {
      const [record, interaction] = await Promise.all([store.get<PromptRecord>(promptKey(version, uid)), d.providers[version].Interaction.find(uid)]);
      if (!record || record.resumeUrl) return;
      const flow = flowFrom(record, verified);
      if (!flow || !interaction || interaction.result) return;
      await finishWith(version, interaction, record.clientId, flow);
      // only once the grant and the interaction's result are stored: a resume URL the page follows
      // before then would send the browser back to the prompt, round and round. From here on the page
      // and the continue step need no attribute values.
      const { flow: _claims, tokenExtras: _extras, ...rest } = record;
      await store.set(promptKey(version, uid), { ...rest, resumeUrl: interaction.returnTo }, Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    } catch {
      // the continue step finishes instead (it is where the page goes without a resume URL)
    }
  }

  async function prompt(ctx: Context, version: Version, uid: string): Promise<void> {
    const [found, stored] = await Promise.all([details(ctx, version, uid), store.get<PromptRecord>(promptKey(version, uid))]);
    if (!found) return messagePage(ctx, 400, EXPIRED.title, EXPIRED.message);
    let record = stored;
    if (!record) {
      const params = found.params as Record<string, unknown>;
      const { kind, types } = requestedTypes(String(params.scope ?? ''));
      try {
        record = kind === 'issuance' ? await startIssuance(version, uid, params, types[0]) : await startVerification(version, uid, params, types);
      } catch (err) {
        if (err instanceof ProtocolError) return finish(ctx, found, { error: err.error, error_description: err.description });
        throw err;
      }
      await store.set(promptKey(version, uid), record, config.lifetimes.interaction);
    }
    const client = d.clients.get(record.clientId);
    const qrSvg = walletQrSvg(record.walletUri);
    const base = `${config.baseUrl}/interaction/${version}/${uid}`;
    const view = record;
    page(ctx, 200, (nonce) =>
      renderPrompt({
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

  async function status(ctx: Context, version: Version, uid: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    const record = await store.get<PromptRecord>(promptKey(version, uid));
    if (!record) {
      ctx.status = 404;
      ctx.body = { status: 'expired', message: 'This request has expired. Go back to the app and start again.' };
      return;
    }
    ctx.body = record.resumeUrl ? { status: 'done', next: record.resumeUrl } : await stepStatus(version, uid, record);
  }

  async function continueFlow(ctx: Context, version: Version, uid: string): Promise<void> {
    const [found, record] = await Promise.all([details(ctx, version, uid), store.get<PromptRecord>(promptKey(version, uid))]);
    if (!found || !record) return messagePage(ctx, 400, EXPIRED.title, EXPIRED.message);
    if (record.resumeUrl) {
      await store.delete(promptKey(version, uid));
      ctx.status = 303;
      return ctx.redirect(record.resumeUrl);
    }
    const state = await stepStatus(version, uid, record);
    if (state.status === 'failed' || state.status === 'expired') {
      await store.delete(promptKey(version, uid));
      const what = record.kind === 'issuance' ? 'the credential offer' : 'the presentation request';
      return finish(ctx, found, {
        error: 'access_denied',
        error_description: state.status === 'expired' ? `${what} expired before the wallet answered` : (state.message ?? 'the wallet step failed'),
      });
    }
    const flow = state.status === 'done' ? await flowOf(version, uid, record) : undefined;
    if (!flow) {
      ctx.redirect(`${config.baseUrl}/interaction/${version}/${uid}`);
      return;
    }
    await Promise.all([finishWith(version, found, record.clientId, flow), store.delete(promptKey(version, uid))]);
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
