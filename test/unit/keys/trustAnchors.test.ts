import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { anchorsFor, isOwnVct, type TrustAnchor } from '../../../src/keys/trustAnchors.js';
import { loadClientIdentity } from '../../../src/verification/clientIdentity.js';
import { makeCert, type TestCert } from '../../helpers/pki.js';

const a = new Uint8Array([1]);
const b = new Uint8Array([2]);
const c = new Uint8Array([3]);
const anchors: TrustAnchor[] = [
  { certificates: [a], formats: ['mso_mdoc'] },
  { certificates: [b], formats: ['dc+sd-jwt'] },
  { certificates: [c], formats: ['dc+sd-jwt', 'mso_mdoc'], types: ['PartnerPass', 'EmployeeBadge'] },
];

describe('which anchor may vouch for which credential (issue 31 §2)', () => {
  it('an anchor vouches for its formats only', () => {
    expect(anchorsFor(anchors, 'mso_mdoc', 'DrivingLicence', false)).toEqual([a]);
    expect(anchorsFor(anchors, 'dc+sd-jwt', 'ExternalBadge', false)).toEqual([b]);
  });

  it('an anchor listing types vouches for those types only', () => {
    expect(anchorsFor(anchors, 'dc+sd-jwt', 'PartnerPass', false)).toEqual([b, c]);
    expect(anchorsFor(anchors, 'mso_mdoc', 'PartnerPass', false)).toEqual([a, c]);
  });

  it('no anchor vouches for an SD-JWT VC of our own type, whatever its types say; an mdoc of it comes from IACAs', () => {
    expect(anchorsFor(anchors, 'dc+sd-jwt', 'EmployeeBadge', true)).toEqual([]);
    expect(anchorsFor(anchors, 'mso_mdoc', 'EmployeeBadge', true)).toEqual([a, c]);
  });

  it("our own vct namespace: the base URL's origin, under its path", () => {
    expect(isOwnVct('https://vc.example.com/types/EmployeeBadge', 'https://vc.example.com')).toBe(true);
    expect(isOwnVct('https://vc.example.com/anything', 'https://vc.example.com/')).toBe(true);
    expect(isOwnVct('https://vc.example.com/base/types/X', 'https://vc.example.com/base')).toBe(true);
    expect(isOwnVct('https://vc.example.com/based/types/X', 'https://vc.example.com/base')).toBe(false);
    expect(isOwnVct('https://vc.example.com.evil.test/types/X', 'https://vc.example.com')).toBe(false);
    expect(isOwnVct('http://vc.example.com/types/X', 'https://vc.example.com')).toBe(false);
    expect(isOwnVct('urn:eudi:pid:1', 'https://vc.example.com')).toBe(false);
  });
});

describe('verifier.trustAnchors at start-up', () => {
  let root: TestCert;
  let dir: string;
  beforeAll(async () => {
    root = await makeCert({ subject: 'CN=Root', ca: true });
    dir = mkdtempSync(join(tmpdir(), 'vc-anchors-unit-'));
    writeFileSync(join(dir, 'roots.pem'), root.pem);
  });
  const load = (trustAnchors: unknown) =>
    loadClientIdentity(
      {
        clientIdPrefix: 'redirect_uri',
        certificateChain: 'c.pem',
        key: 'k.pem',
        responseMode: 'direct_post',
        trustAnchors,
      } as never,
      { baseUrl: 'http://127.0.0.1:1', responseUri: 'http://127.0.0.1:1/vp/response', baseDir: dir, generate: false },
    );

  it('reads the single-file form as mdoc IACAs only, with a note saying how to write the list', async () => {
    const { identity, origin } = await load('roots.pem');
    expect(identity.trustAnchors).toEqual([{ certificates: [root.der], formats: ['mso_mdoc'] }]);
    expect(
      origin.warnings.some((w) =>
        w.startsWith(
          'verifier.trustAnchors: the single file roots.pem is trusted for mdoc issuers (IACAs) only; to trust it for x5c-signed SD-JWT VCs too, write a list: trustAnchors: [{ certificates: roots.pem, formats: [mso_mdoc, dc+sd-jwt]',
        ),
      ),
    ).toBe(true);
  });

  it('reads the list form per anchor', async () => {
    const { identity } = await load([{ certificates: 'roots.pem', formats: ['dc+sd-jwt'], types: ['PartnerPass'] }]);
    expect(identity.trustAnchors).toEqual([
      { certificates: [root.der], formats: ['dc+sd-jwt'], types: ['PartnerPass'] },
    ]);
  });

  it('refuses an anchor file holding a certificate that is no CA', async () => {
    const leaf = await makeCert({ subject: 'CN=leaf', issuer: root });
    writeFileSync(join(dir, 'leaf.pem'), leaf.pem);
    await expect(load([{ certificates: 'leaf.pem', formats: ['mso_mdoc'] }])).rejects.toThrow(
      /^verifier\.trustAnchors\[0\]\.certificates \(.*leaf\.pem\): certificate 1 is not a CA certificate/,
    );
  });
});
