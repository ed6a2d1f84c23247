/** What every mode sets up around its servers: the run's keys, a server's spec, Redis reachability and clean-up. */
import { randomUUID } from 'node:crypto';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { exportJWK, generateKeyPair } from 'jose';
import { loadKeys } from '../../src/keys/keys.js';
import { generateVerifierCertificates } from '../../src/keys/x509.js';
import { certifyCredentialKey, generateIssuerCa } from '../../src/keys/issuerCertificate.js';
import { createTestMdocIssuer } from '../../test/helpers/mdoc.js';
import {
  benchIacaFile,
  benchMdocSignerFile,
  issuerFiles,
  keyFiles,
  LIFETIMES,
  pidIssuerKeyFile,
  verifierFiles,
  type ServerSpec,
} from './config.js';
import { freePort } from './children.js';
import type { BenchOptions } from './options.js';

/**
 * The run's key files (ID token, credential, cookies, pairwise, the verifier's certificate), generated once in a temporary folder both
 * servers read; and the bench PID issuer's key (identity_flow: our server trusts it, the load process signs PIDs).
 */
export async function makeKeys(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'vc-bench-keys-'));
  await loadKeys({ ...keyFiles(dir), generate: true }, dir);
  const verifier = await generateVerifierCertificates('127.0.0.1');
  writeFileSync(verifierFiles(dir).certificateChain, verifier.chain);
  writeFileSync(verifierFiles(dir).key, verifier.key, { mode: 0o600 });
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  writeFileSync(
    pidIssuerKeyFile(dir),
    JSON.stringify({ ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' }),
    { mode: 0o600 },
  );
  // annex_c_verification_flow: the bench IACA (trusted by ours) and its document signer (used by the load process)
  const iaca = await createTestMdocIssuer({ name: 'Bench IACA' });
  writeFileSync(benchIacaFile(dir), iaca.iacaPem);
  writeFileSync(
    benchMdocSignerFile(dir),
    JSON.stringify({ chain: iaca.signer.chain, privateJwk: iaca.signer.privateJwk }),
    { mode: 0o600 },
  );
  return dir;
}

export async function serverSpec(
  opts: BenchOptions,
  kind: 'ours' | 'baseline',
  store: 'memory' | 'redis',
  keyDir: string,
  lifetimes = LIFETIMES,
): Promise<ServerSpec> {
  const port = await freePort();
  // ours' webhook receiver (in a load process, started later) gets its port now, so that the server's config can name it
  let webhookPort = await freePort();
  while (webhookPort === port) webhookPort = await freePort();
  if (kind === 'ours') await makeIssuerCertificate(keyDir, port);
  return {
    kind,
    store,
    redisUrl: opts.redisUrl,
    redisPrefix: `bench:${opts.runId}:${kind}:`,
    keyDir,
    lifetimes,
    port,
    webhookPort,
  };
}

/**
 * Ours signs its credentials as production does (HAIP 1.0: an issuer certificate chain in `x5c`): an
 * operator's issuer key and its leaf, naming this server's credential issuer, under a CA made for the run.
 */
async function makeIssuerCertificate(keyDir: string, port: number): Promise<void> {
  const ca = await generateIssuerCa('127.0.0.1');
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const [leaf] = await certifyCredentialKey(ca, jwk, [`http://127.0.0.1:${port}/wallet`]);
  const files = issuerFiles(keyDir, port);
  const pem = leaf.match(/.{1,64}/g)!.join('\n');
  writeFileSync(files.certificateChain, `-----BEGIN CERTIFICATE-----\n${pem}\n-----END CERTIFICATE-----\n`);
  const key = createPrivateKey({ key: jwk as never, format: 'jwk' }).export({ type: 'pkcs8', format: 'pem' });
  writeFileSync(files.key, key, { mode: 0o600 });
}

export async function redisReachable(url: string): Promise<boolean> {
  const r = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
    return true;
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** Removes this run's keys (its own prefix only; bounded SCAN). */
export async function cleanRedis(url: string, prefix: string): Promise<number> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  r.on('error', () => {});
  let removed = 0;
  try {
    await r.connect();
    let cursor = '0';
    for (let i = 0; i < 100_000; i++) {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 2_000);
      if (keys.length) removed += await r.unlink(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    r.disconnect();
  }
  return removed;
}
