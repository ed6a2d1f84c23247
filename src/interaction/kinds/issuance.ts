import { randomUUID } from 'node:crypto';
import { ProtocolError } from '../../rules/errors.js';
import { validateImages } from '../../rules/images.js';
import type { HintHolder } from '../../oidc/requestChecks.js';
import { credentialExpiry } from '../../rules/validity.js';
import type { InteractionDeps } from '../deps.js';
import type { WalletStep } from '../steps.js';
import type { StepKind, StepStart } from '../stepKinds.js';
import { flowOf } from '../request.js';
import { configuredTypes, walletPrompt } from './walletPrompt.js';

/**
 * OpenID4VCI: the checks the spec places at authorise (the hint's attributes against the template and
 * its images), then an offer of the hint's attributes.
 */
async function startIssuance(d: InteractionDeps, { stepId, params, flow }: StepStart): Promise<WalletStep> {
  const { external } = flow;
  const type = d.credentialTypes.get(flow.types[0])!;
  const hint = (await d.store.get<HintHolder>(String(params.vc_hint)))?.hint;
  if (!hint || hint.clientId !== params.client_id)
    throw new ProtocolError('invalid_request', 'id_token_hint: the request has expired; start again');
  // matched against the template when the hint was verified (src/oidc/requestChecks.ts)
  if (hint.templateError !== undefined || !hint.attributes)
    throw new ProtocolError(
      'invalid_scope',
      hint.templateError ?? 'id_token_hint: the attributes do not match the credential template',
    );
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

/** An `issue.<type>` scope: the wallet takes a credential offer. */
export const ISSUANCE: StepKind = {
  takes: (flow) => flow.kind === 'issuance',
  start: startIssuance,
  // the offer's status is kept under its id, with the offer's expiry
  status: (d, _stepId, step) => d.walletIssuer.offerStatus(step.offerId!, step.expiresAt / 1000),
  view: walletPrompt('issuance', configuredTypes),
  externalKind: 'issuance',
  expiredDescription: 'the credential offer expired before the wallet answered',
};
