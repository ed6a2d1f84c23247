import type { Context } from 'koa';
import { StoreUnavailableError } from '../store/redis.js';
import { safeErrorDescription } from '../http/errorDescription.js';
import { linkToFlow } from '../telemetry/spans.js';
import { GrantClaims, HOLDER_ACCOUNT, type FlowClaims } from '../flow/flowClaims.js';
import { stepIdOf, type WalletStep } from './steps.js';
import type { Interaction, InteractionDeps, Version } from './deps.js';
import { flowOf } from './request.js';
import { STEP_KINDS } from './stepKinds.js';

/** The interaction of this browser (its cookie), when it is the one the URL names. */
export async function interactionOf(
  d: Pick<InteractionDeps, 'providers'>,
  ctx: Context,
  version: Version,
  uid: string,
): Promise<Interaction | undefined> {
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
export async function finishWithError(
  d: Pick<InteractionDeps, 'providers'>,
  ctx: Context,
  version: Version,
  error: { error: string; error_description: string },
): Promise<void> {
  // oidc-provider keeps the result with the interaction: bounded and in the RFC's characters before it does
  const result = { error: error.error, error_description: safeErrorDescription(error.error_description) };
  const returnTo = await d.providers[version].interactionResult(ctx.req, ctx.res, result, {
    mergeWithLastSubmission: false,
  });
  ctx.status = 303;
  ctx.redirect(returnTo);
}

/** How long a step and its claims stay readable once the browser finished with them (a second poll, a second tab). */
export const FINISHED_STEP_SECONDS = 30;

/**
 * The holder's consent to the client (the wallet step is it): a Grant for the requested scope, the ID
 * token's claims kept under it for the token endpoint (D2), and the interaction's result naming it, all
 * written in one round trip: the interaction read for this request is saved with its result, as
 * `interactionResult` does after reading it again. The step and its claims, handed over, are then kept
 * only briefly. Returns where the browser resumes the authorisation.
 */
export async function finishWithClaims(
  d: InteractionDeps,
  _ctx: Context,
  version: Version,
  interaction: Interaction,
  step: WalletStep,
  claims: FlowClaims,
): Promise<string> {
  const provider = d.providers[version];
  const stepId = stepIdOf(version, interaction.uid);
  const grant = new provider.Grant({ accountId: HOLDER_ACCOUNT, clientId: step.clientId });
  grant.addOIDCScope(String(interaction.params.scope));
  const savingGrant = grant.save();
  // the id is drawn as the save starts (else: once it is saved)
  const grantId = grant.jti ?? (await savingGrant);
  interaction.result = { login: { accountId: HOLDER_ACCOUNT, remember: false }, consent: { grantId }, wallet: {} };
  await Promise.all([
    savingGrant,
    new GrantClaims(d.store).save(
      grantId,
      { ...claims, tokenExtras: step.tokenExtras, ...flowOf(interaction.params) },
      d.config.lifetimes.interaction,
    ),
    interaction.persist(),
    d.steps.finished(stepId, FINISHED_STEP_SECONDS),
    STEP_KINDS[step.kind].finished?.(d, stepId, step, FINISHED_STEP_SECONDS),
  ]);
  return interaction.returnTo;
}
