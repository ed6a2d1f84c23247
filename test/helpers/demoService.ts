import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { demoIacaFile, testConfig } from './service.js';

/**
 * config/demo.yaml's identity blocks, as `npm start` reads them with BASE_URL set: read with a stand-in base
 * URL, which the test service's takes the place of once its port is known.
 */
const STAND_IN = 'http://base-url.localhost:1';
export async function demoIdentity(): Promise<(baseUrl: string) => Record<string, unknown>> {
  const { identity } = (
    await loadConfig(fileURLToPath(new URL('../../config/demo.yaml', import.meta.url)), { BASE_URL: STAND_IN })
  ).config;
  const text = JSON.stringify(identity);
  return (baseUrl) => JSON.parse(text.replaceAll(STAND_IN, baseUrl));
}

/**
 * The test clients, issuer-pkce being the demo's: its callback and webhook at /demo, External and both identity
 * flows, and (`registration`) a registration certificate, as config/demo.yaml gives demo-issuer one.
 */
export function demoClients(
  baseUrl: string,
  webhookSecret: string,
  registration?: { subject: string; certificates: string[] },
): Record<string, unknown>[] {
  return (testConfig(0).clients as { clientId: string; redirectUris: string[]; scopes: string[] }[]).map((c) =>
    c.clientId === 'issuer-pkce'
      ? {
          ...c,
          redirectUris: [...c.redirectUris, `${baseUrl}/demo/callback`],
          scopes: [...c.scopes, 'External', 'VerifiedIdentity', 'VerifiedIdentity_Other'],
          webhook: { url: `${baseUrl}/demo/webhook`, secret: webhookSecret },
          ...(registration ? { registration } : {}),
        }
      : c,
  );
}

/**
 * The test verifier with config/demo.yaml's trust anchor: the demo's test IACA (made at start with demo: true)
 * for the PID as an mdoc (its identity block's `mdoc`) and, when a test configures it, the age check.
 */
export function demoVerifier(types: string[] = ['VerifiedIdentity']): Record<string, unknown> {
  return {
    ...(testConfig(0).verifier as Record<string, unknown>),
    trustAnchors: [{ certificates: demoIacaFile, formats: ['mso_mdoc'], types }],
  };
}
