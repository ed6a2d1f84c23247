/**
 * Child process: the machine's physical limits, one core. RS256 signatures per second with a tight
 * crypto.sign loop on a 2048-bit key (the brief's measure), the same through WebCrypto (what jose, hence
 * oidc-provider and our ID token signer, call: CPU per signature), and the costs the issuance target
 * allows on top of the baseline: one SD-JWT VC signature (src/issuance/sdJwtVc.ts, as the server makes
 * it), one ES256 verification (the wallet's proof), and one Standard Webhooks signature (the HMAC that
 * external_issuance_flow allows on top of the issuance flow's allowance). The bench prices them at a run's
 * start and again at its end: RS256's move between the two says whether the machine stayed the same, and
 * each measure's chunks (samples) give the allowance's crypto terms their spread.
 */
import { generateKeyPairSync, sign, verify, webcrypto } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { exportJWK, generateKeyPair } from 'jose';
import { Webhook } from 'standardwebhooks';
import { CLIENT } from './config.js';

const durationMs = Number(process.env.BENCH_CRYPTO_MS ?? 2000);
const data = Buffer.from('eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.'.repeat(12));

/** Each measure is taken in this many consecutive chunks, each its own CPU per operation: the price's spread. */
const CHUNKS = 5;

type Rate = { perSecond: number; cpuMsPerOp: number; count: number; samples: number[] };

/** CPU ms per operation of each chunk (its share of the time, of the count), and the whole. */
async function measure(fn: () => unknown, ms: number, maxCount: number, awaitEach: boolean): Promise<Rate> {
  for (let i = 0; i < 20; i++) await (awaitEach ? fn() : Promise.resolve(fn()));
  const samples: number[] = [];
  const cpuStart = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  for (let c = 0; c < CHUNKS; c++) {
    const cpu0 = process.cpuUsage();
    const until = t0 + ((c + 1) * ms) / CHUNKS;
    const cap = Math.ceil(((c + 1) * maxCount) / CHUNKS);
    let k = 0;
    while (n < cap && performance.now() < until) {
      if (awaitEach) await fn();
      else fn();
      n++;
      k++;
    }
    const cpu = process.cpuUsage(cpu0);
    if (k) samples.push((cpu.user + cpu.system) / 1000 / k);
  }
  const elapsed = performance.now() - t0;
  const cpu = process.cpuUsage(cpuStart);
  return { perSecond: n / (elapsed / 1000), cpuMsPerOp: (cpu.user + cpu.system) / 1000 / n, count: n, samples };
}

const tight = (fn: () => void, ms: number, maxCount: number) => measure(fn, ms, maxCount, false);
const sequential = (fn: () => Promise<unknown>, ms: number, maxCount: number) => measure(fn, ms, maxCount, true);

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rs256 = await tight(() => sign('sha256', data, rsa.privateKey), durationMs, 200_000);

const subtleKey = await webcrypto.subtle.importKey(
  'jwk',
  rsa.privateKey.export({ format: 'jwk' }),
  { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  false,
  ['sign'],
);
const rs256WebCrypto = await sequential(
  () => webcrypto.subtle.sign('RSASSA-PKCS1-v1_5', subtleKey, data),
  durationMs / 2,
  100_000,
);

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const es256Sign = await tight(
  () => sign('sha256', data, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' }),
  durationMs / 2,
  200_000,
);
const sig = sign('sha256', data, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' });
const es256Verify = await tight(
  () => verify('sha256', data, { key: ec.publicKey, dsaEncoding: 'ieee-p1363' }, sig),
  durationMs / 2,
  200_000,
);

const { SdJwtVcSigner } = await import('../../src/issuance/sdJwtVc.js');
const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const issuerJwk = { ...(await exportJWK(privateKey)), kid: 'bench' };
const holder = await generateKeyPair('ES256', { extractable: true });
const holderJwk = await exportJWK(holder.publicKey);
const signer = new SdJwtVcSigner(issuerJwk);
const sdJwtVc = await sequential(
  () =>
    signer.sign({
      issuer: 'http://127.0.0.1/wallet',
      vct: 'http://127.0.0.1/vct/EmployeeBadge',
      attributes: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' },
      holderJwk,
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
    }),
  durationMs / 2,
  50_000,
);

// a flow.completed delivery signed as src/webhooks/queue.ts signs each attempt: a Webhook per secret (which
// decodes it), then sign = HMAC-SHA256 (the package's own JavaScript SHA-256) and base64, over a body of the real shape
const hookBody = JSON.stringify({
  type: 'flow.completed',
  timestamp: new Date().toISOString(),
  data: {
    state: 'Vq3n0bQm8Jk1r2s3t4u5vw',
    client_id: CLIENT.id,
    flow: 'issuance',
    ContinuationContext: 'a'.repeat(43),
  },
});
const hookSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const webhookSignature = await tight(
  () => new Webhook(hookSecret).sign('msg_0123456789abcdef0123456789abcdef', new Date(), hookBody),
  durationMs / 2,
  500_000,
);

process.send?.({ type: 'rates', rates: { rs256, rs256WebCrypto, es256Sign, es256Verify, sdJwtVc, webhookSignature } });
process.exit(0);
