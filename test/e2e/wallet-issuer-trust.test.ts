/**
 * The dev wallet against our issuer, trusting the issuer's CA (`--issuer-trust keys/issuer-ca.pem`): a
 * credential's `x5c` chain, checked by the wallet's own code (src/wallet/certificates.ts on @peculiar/x509),
 * vouches for its key; a wallet trusting another CA refuses the same kind of credential.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPemCertificates } from '../../src/wallet/certificates.js';
import { DevWallet } from '../../src/wallet/holder.js';
import { pushIssuance } from '../helpers/flows.js';
import { makeCert } from '../helpers/pki.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { issuerCaFile, REDIRECT, SECRETS, startTestService, type TestService } from '../helpers/service.js';

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.stop();
});

const walletTrusting = (issuerTrust: Uint8Array[]) =>
  DevWallet.open(join(mkdtempSync(join(tmpdir(), 'vc-wallet-')), 'wallet.json'), { issuerTrust });

/** A relying party's issuance up to the offer on the holder's prompt page. */
async function offerOnPage(firstName: string): Promise<string> {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: { FirstName: firstName, LastName: 'Lovelace' },
    pin: '1234',
    redirectUri: REDIRECT,
  });
  const prompt = await new Browser(REDIRECT).follow(rp.authorizeUrl.href);
  return offerFromPage(prompt.html!);
}

describe('the dev wallet trusts issuers by their CA', () => {
  it('keeps a credential whose x5c chain ends at the trusted issuer CA', async () => {
    const wallet = await walletTrusting(readPemCertificates(readFileSync(issuerCaFile, 'utf8'), 'issuer-ca.pem'));
    const stored = await wallet.receive(await offerOnPage('Ada'), { pin: '1234' });
    expect(stored).toMatchObject({ issuer: `${t.url}/wallet`, claims: { FirstName: 'Ada', LastName: 'Lovelace' } });
    expect(decodeProtectedHeader(stored.credential.split('~')[0]).x5c).toHaveLength(1);
  });

  it('refuses one whose x5c chain ends at another CA, and keeps nothing', async () => {
    const otherCa = await makeCert({ subject: 'CN=Another issuer CA', ca: true });
    const wallet = await walletTrusting([otherCa.der]);
    await expect(wallet.receive(await offerOnPage('Grace'), { pin: '1234' })).rejects.toThrow(
      /issuer certificate chain \(x5c\) is refused: the chain does not end at a trusted root/,
    );
    expect(wallet.list()).toEqual([]);
  });
});
