import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describe as describeCredential, parseArgs, run } from '../../../src/wallet/cli.js';
import { DevWallet } from '../../../src/wallet/holder.js';
import {
  DEFAULT_WALLET_FILE,
  readWalletFile,
  writeWalletFile,
  type StoredMdoc,
  type StoredSdJwt,
} from '../../../src/wallet/walletFile.js';

const credential: StoredSdJwt = {
  id: '5b0c7a1e-0000-4000-8000-000000000001',
  format: 'dc+sd-jwt',
  credential: 'eyJhbGciOiJFUzI1NiJ9.e30.sig~WyJzYWx0IiwiRmlyc3ROYW1lIiwiQWRhIl0~',
  issuer: 'https://vc.example.com/wallet',
  vct: 'https://vc.example.com/types/EmployeeBadge',
  receivedAt: '2026-01-01T00:00:00.000Z',
  holderKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' },
  claims: { FirstName: 'Ada' },
};

const mdoc: StoredMdoc = {
  id: '5b0c7a1e-0000-4000-8000-000000000002',
  format: 'mso_mdoc',
  credential: 'omdpc3N1ZXJBdXRo',
  issuer: 'mdoc issuer',
  doctype: 'org.iso.18013.5.1.mDL',
  receivedAt: '2026-01-02T00:00:00.000Z',
  holderKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' },
  claims: { 'org.iso.18013.5.1': { given_name: 'Ada', portrait: 'x'.repeat(100) } },
  validUntil: '2027-01-01T00:00:00Z',
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wallet-file-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the wallet file', () => {
  it('is readable only by its owner, as it holds private keys', async () => {
    const file = join(dir, 'nested', 'wallet.json');
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'nested'))).mode & 0o777).toBe(0o700);
  });

  it('becomes 0600 again when rewritten over a wider file', async () => {
    const file = join(dir, 'wallet.json');
    await writeFile(file, JSON.stringify({ version: 1, credentials: [] }), { mode: 0o644 });
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('round-trips its credentials, holder keys included', async () => {
    const file = join(dir, 'wallet.json');
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    expect(await readWalletFile(file)).toEqual({ version: 1, credentials: [credential] });
    const wallet = await DevWallet.open(file);
    expect(wallet.list()).toEqual([credential]);
    expect(JSON.parse(await readFile(file, 'utf8')).credentials[0].holderKey.d).toBe('d');
  });

  it('opens as an empty wallet when it does not exist yet', async () => {
    const wallet = await DevWallet.open(join(dir, 'missing.json'));
    expect(wallet.list()).toEqual([]);
  });

  it('refuses a file that is not a wallet', async () => {
    const file = join(dir, 'other.json');
    await writeFile(file, '{"hello":"world"}');
    await expect(DevWallet.open(file)).rejects.toThrow('is not a wallet file');
    await writeFile(file, 'not json');
    await expect(DevWallet.open(file)).rejects.toThrow('is not a wallet file');
  });

  it('hands out copies, so callers cannot change what is stored', async () => {
    const file = join(dir, 'wallet.json');
    await writeWalletFile(file, { version: 1, credentials: [credential] });
    const wallet = await DevWallet.open(file);
    wallet.list()[0].claims.FirstName = 'Eve';
    expect(wallet.list()[0].claims.FirstName).toBe('Ada');
  });
});

describe('wallet files with mdocs', () => {
  it('reads a file written before mdocs were held, as it is', async () => {
    const file = join(dir, 'old.json');
    // what the wallet wrote before this change: SD-JWT VCs only, with their vct
    await writeFile(file, JSON.stringify({ version: 1, credentials: [credential] }, null, 2));
    expect((await DevWallet.open(file)).list()).toEqual([credential]);
  });

  it('keeps mdocs beside SD-JWT VCs, and lists both', async () => {
    const file = join(dir, 'wallet.json');
    await writeWalletFile(file, { version: 1, credentials: [credential, mdoc] });
    expect((await readWalletFile(file)).credentials).toEqual([credential, mdoc]);
    const lines: string[] = [];
    await run(['list', '--wallet', file], (line) => lines.push(line));
    expect(lines[0]).toContain('https://vc.example.com/types/EmployeeBadge');
    expect(lines[0]).toContain('org.iso.18013.5.1.mDL (mdoc)');
  });

  it('describes an mdoc by doctype, its elements under their namespace', () => {
    expect(describeCredential(mdoc).split('\n')).toEqual([
      'org.iso.18013.5.1.mDL (mdoc)',
      `  id:       ${mdoc.id}`,
      '  issuer:   mdoc issuer',
      '  received: 2026-01-02T00:00:00.000Z',
      '  expires:  2027-01-01T00:00:00Z',
      '  claims:',
      '    org.iso.18013.5.1:',
      '      given_name: Ada',
      `      portrait: ${'x'.repeat(57)}...`,
    ]);
  });

  it('refuses mdoc files it cannot take, before reading the mdoc', async () => {
    const wallet = await DevWallet.open(join(dir, 'w.json'));
    const deviceKey = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'd' };
    await expect(wallet.importMdoc({ issuerSigned: '', doctype: 'd', deviceKey })).rejects.toThrow(/issuerSigned/);
    await expect(wallet.importMdoc({ issuerSigned: 'abc', doctype: '', deviceKey })).rejects.toThrow(/doctype/);
    await expect(
      wallet.importMdoc({
        issuerSigned: 'abc',
        doctype: 'd',
        deviceKey: { kty: 'OKP', crv: 'Ed25519', x: 'x', d: 'd' },
      }),
    ).rejects.toThrow(/P-256/);
    await expect(
      wallet.importMdoc({ issuerSigned: 'abc', doctype: 'd', deviceKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } }),
    ).rejects.toThrow(/private/);
    await expect(
      run(['import-mdoc', join(dir, 'missing.json'), '--wallet', join(dir, 'w.json')], () => {}),
    ).rejects.toThrow(/missing\.json: no such file/);
    await writeFile(join(dir, 'bad.json'), 'not json');
    await expect(
      run(['import-mdoc', join(dir, 'bad.json'), '--wallet', join(dir, 'w.json')], () => {}),
    ).rejects.toThrow(/bad\.json: not JSON/);
    expect(wallet.list()).toEqual([]);
  });
});

describe('the dev wallet command line', () => {
  it('reads import-mdoc with its JSON file', () => {
    expect(parseArgs(['import-mdoc', 'mdl.json', '--wallet', 'w.json'])).toEqual({
      command: 'import-mdoc',
      mdocFile: 'mdl.json',
      wallet: 'w.json',
    });
    expect(parseArgs(['import-mdoc', 'mdl.json'])).toEqual({
      command: 'import-mdoc',
      mdocFile: 'mdl.json',
      wallet: DEFAULT_WALLET_FILE,
    });
  });

  it('says how to run it: npm run wallet -- ...', async () => {
    const lines: string[] = [];
    await run(['help'], (line) => lines.push(line));
    expect(lines[0]).toMatch(/npm run wallet -- present <openid4vp-uri> \[--trust CA\.pem\]/);
    expect(lines[0]).toMatch(/npm run wallet -- import-mdoc <mdoc\.json>/);
    expect(lines[0]).not.toMatch(/tsx src/);
  });

  it('reads receive with a PIN and a wallet file', () => {
    expect(parseArgs(['receive', 'openid-credential-offer://?x', '--pin', '1234', '--wallet=w.json'])).toEqual({
      command: 'receive',
      offerUri: 'openid-credential-offer://?x',
      pin: '1234',
      wallet: 'w.json',
    });
  });

  it('defaults the wallet file', () => {
    expect(parseArgs(['list'])).toEqual({ command: 'list', wallet: DEFAULT_WALLET_FILE });
  });

  it.each([
    [['frobnicate']],
    [['receive']],
    [['receive', 'a', 'b']],
    [['receive', 'a', '--pin']],
    [['list', '--pin', '1']],
    [['list', '--verbose']],
    [['import-mdoc']],
    [['import-mdoc', 'a.json', 'b.json']],
    [['import-mdoc', 'a.json', '--trust', 'ca.pem']],
    [['import-mdoc', 'a.json', '--pin', '1']],
  ])('refuses %j', (argv) => {
    expect(() => parseArgs(argv)).toThrow();
  });
});
