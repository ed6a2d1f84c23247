import type { Texts } from '../../i18n/catalogues.js';
import type { InteractionDeps } from '../deps.js';
import type { WalletStep } from '../steps.js';
import type { StepView } from '../stepKinds.js';
import { renderPromptBytes, type PromptCredentialType, type PromptView } from '../views/prompt.js';
import { qrSvg } from '../views/qrSvg.js';

/** What a wallet step's prompt lists as the credentials it is about. */
export type PromptTypes = (d: InteractionDeps, texts: Texts, step: WalletStep) => PromptCredentialType[];

/** The configured credential types of the step, labels from the config in the page's language. */
export const configuredTypes: PromptTypes = (d, texts, step) =>
  step.credentialTypes.map((name) => {
    const type = d.credentialTypes.get(name)!;
    // issuance: what the hint carried; verification: what is asked for
    const labels = Object.fromEntries(
      Object.entries(type.attributes).flatMap(([a, spec]) => (spec.label ? [[a, texts.pick(spec.label)!]] : [])),
    );
    if (step.attributes)
      return { name, displayName: texts.pick(type.displayName), attributes: step.attributes, labels };
    const names = Object.keys(type.attributes);
    return {
      name,
      displayName: texts.pick(type.displayName),
      attributes: names.filter((a) => type.attributes[a].required),
      optional: names.filter((a) => !type.attributes[a].required),
      labels,
    };
  });

/** The view of a step a wallet takes part in: its QR code, its link for a wallet on this device, what it is about. */
export function walletPrompt(kind: PromptView['kind'], typesOf: PromptTypes) {
  return (d: InteractionDeps, { texts, brand, clientLogoHref, clientName, base, step }: StepView) => {
    const svg = qrSvg(step.walletUri!);
    return (nonce: string) =>
      renderPromptBytes({
        nonce,
        texts,
        brand,
        clientLogoHref,
        kind,
        clientName,
        credentialTypes: typesOf(d, texts, step),
        walletUri: step.sameDeviceUri ?? step.walletUri!,
        qrUri: step.walletUri!,
        qrSvg: svg,
        pin: step.pinLength ? { length: step.pinLength } : undefined,
        statusUrl: `${base}/status`,
        continueUrl: `${base}/continue`,
        ...(kind === 'issuance' ? {} : { freshUrl: `${base}/fresh` }),
        expiresAt: step.expiresAt,
        handover: step.external,
        // a presentation may come back through the browser too (OpenID4VP 1.0 Appendix A)
        ...(kind !== 'issuance' ? { dcApiUrl: `${base}/dc-api` } : {}),
      });
  };
}
