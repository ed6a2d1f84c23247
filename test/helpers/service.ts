import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createService, type Service } from '../../src/app.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { Store } from '../../src/store/types.js';
import { testStore } from './stores.js';
import { loadKeys } from '../../src/keys/keys.js';
import { generateVerifierCertificates, readPemCertificates } from '../../src/keys/x509.js';

// the test clients' secrets, in a module of their own so that the run's log check (test/logCapture.ts) reads them without this one's key generation
import { SECRETS } from './secrets.js';
export { SECRETS };

export const REDIRECT = 'https://rp.example/cb';
export const OTHER_REDIRECT = 'https://rp.example/other';

/**
 * Keys are generated once per test file into a temp folder, as on a first start with files, so that the
 * services of a test file on Redis load them from there and leave no key sets in the shared Redis.
 */
const keyDir = mkdtempSync(join(tmpdir(), 'vc-keys-'));
const keyFiles = {
  idToken: join(keyDir, 'id.json'),
  credential: join(keyDir, 'cred.json'),
  cookies: join(keyDir, 'cookies.json'),
  pairwise: join(keyDir, 'pairwise.json'),
};
await loadKeys({ ...keyFiles, generate: true }, keyDir);
/** The verifier's certificate for the tests' base URLs, and the local CA a wallet must trust (DER). */
const verifierFiles = { certificateChain: join(keyDir, 'verifier-chain.pem'), key: join(keyDir, 'verifier-key.pem') };
const verifierCertificates = await generateVerifierCertificates('127.0.0.1');
writeFileSync(verifierFiles.certificateChain, verifierCertificates.chain);
writeFileSync(verifierFiles.key, verifierCertificates.key, { mode: 0o600 });
export const VERIFIER_CA_PEM = verifierCertificates.caCertificate;
export const VERIFIER_TRUST: Uint8Array[] = readPemCertificates(VERIFIER_CA_PEM, 'the test verifier CA');

/** No issuer certificate files: the services make a local issuer CA here (beside the credential key file) on first start. */
const issuerFiles = { certificateChain: join(keyDir, 'issuer-chain.pem'), key: join(keyDir, 'issuer-key.pem') };
/** The local issuer CA the services certify credential keys with, once one of them has started (PEM). */
export const issuerCaFile = join(keyDir, 'issuer-ca.pem');
/** With demo: true, the demo's test IACA made beside the issuer CA on first start (src/demo/iaca.ts; PEM). */
export const demoIacaFile = join(keyDir, 'demo-iaca.pem');

export function testConfig(port: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    store: 'memory',
    logLevel: 'silent',
    keys: keyFiles,
    verifier: verifierFiles,
    issuer: issuerFiles,
    credentialTypes: [
      {
        name: 'EmployeeBadge',
        displayName: 'Employee badge',
        pinCodeLength: 4,
        validity: 'P30D',
        attributes: {
          FirstName: { type: 'string' },
          LastName: { type: 'string' },
          Email: { type: 'email', required: false },
        },
      },
      {
        name: 'MembershipCard',
        validity: 'P10D',
        attributes: {
          MemberName: { type: 'string' },
          MemberNumber: { type: 'number' },
          Photo: { type: 'image', required: false },
        },
      },
    ],
    clients: [
      {
        clientId: 'issuer-pkce',
        clientName: 'PKCE Issuer',
        clientSecret: SECRETS.pkceIssuer,
        redirectUris: [REDIRECT, OTHER_REDIRECT],
        pkce: 'required',
        scopes: ['issue.EmployeeBadge', 'issue.MembershipCard', 'EmployeeBadge', 'MembershipCard'],
      },
      {
        clientId: 'issuer-plain',
        clientName: 'Plain Issuer',
        clientSecret: SECRETS.plainIssuer,
        redirectUris: [REDIRECT],
        pkce: 'optional',
        scopes: ['issue.MembershipCard', 'MembershipCard'],
      },
      {
        clientId: 'other',
        clientSecret: SECRETS.other,
        redirectUris: [REDIRECT],
        scopes: ['issue.EmployeeBadge', 'EmployeeBadge'],
      },
    ],
    ...overrides,
  };
}

export interface TestService {
  url: string;
  /** where the service listens (http on loopback), which is `url` unless a test puts a proxy in front */
  listener: string;
  service: Service;
  stop(): Promise<void>;
}

/** The real app on 127.0.0.1 and a random port, configured as an operator would. */
export async function startTestService(
  overrides: Record<string, unknown> | ((baseUrl: string) => Record<string, unknown>) = {},
  /** `lookup`: the DNS of the service's outbound fetches, for a test that names hosts of its own */
  opts: { store?: Store; logger?: Logger; lookup?: LookupFunction } = {},
): Promise<TestService> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = createServer({ maxHeaderSize: 32 * 1024 }, (req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = validateConfig(testConfig(port, typeof overrides === 'function' ? overrides(baseUrl) : overrides));
  const service = await createService(
    { config, file: 'test', baseDir: process.cwd() },
    {
      store: opts.store ?? (await testStore()),
      logger: opts.logger ?? createLogger('silent'),
      ...(opts.lookup ? { lookup: opts.lookup } : {}),
    },
  );
  handler = service.app.callback();
  return {
    url: config.baseUrl,
    listener: baseUrl,
    service,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await service.close();
    },
  };
}
