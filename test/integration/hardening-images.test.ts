/**
 * Issue "Hardening" 3: decompression bombs sent as image attributes, end to end. A relying party pushes
 * an issuance whose hint carries the image, the holder's browser opens the authorise URL, and the prompt
 * checks the image (spec Errors: TokenHint image "Images not valid" -> redirected `invalid_request`, D4,
 * D9). An image whose declared dimensions exceed the attribute's limits (maxWidth, maxHeight: 4096 by
 * default; maxPixels: maxWidth * maxHeight) is refused, and no credential offer is created for it.
 */
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, testConfig, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, postForm } from '../helpers/rp.js';
import { VERSION_1, VERSION_2, type Version } from '../helpers/versions.js';

// --- the images, built here ----------------------------------------------------------------------------

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** A PNG chunk with its CRC-32 (PNG 5.3, annex D). */
function chunk(type: string, data: Buffer = Buffer.alloc(0)): Buffer {
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32(data.length), typeAndData, u32(zlib.crc32(typeAndData))]);
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };

/**
 * A PNG whose IHDR declares width x height, with valid CRCs. Its IDAT holds `rows` zero scanlines (filter
 * byte and row), so a small stream when `rows` is small; with rows = height it is a complete image.
 */
function png(
  width: number,
  height: number,
  opts: { bitDepth?: number; colourType?: number; rows?: number } = {},
): Buffer {
  const bitDepth = opts.bitDepth ?? 8;
  const colourType = opts.colourType ?? 0;
  const rowBytes = 1 + Math.ceil((width * CHANNELS[colourType] * bitDepth) / 8);
  const ihdr = Buffer.concat([u32(width), u32(height), Buffer.from([bitDepth, colourType, 0, 0, 0])]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(rowBytes * Math.min(opts.rows ?? height, height)))),
    chunk('IEND'),
  ]);
}

/**
 * A baseline JPEG (SOI, DQT, SOF0, DHT DC and AC, SOS, one byte of entropy-coded data, EOI) whose SOF0
 * declares width x height, one greyscale component (ITU-T T.81 annex B).
 */
function jpeg(width: number, height: number): Buffer {
  return Buffer.from([
    0xff,
    0xd8,
    0xff,
    0xdb,
    0x00,
    0x43,
    0x00,
    ...Array(64).fill(1),
    0xff,
    0xc0,
    0x00,
    0x0b,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x01,
    0x01,
    0x11,
    0x00,
    0xff,
    0xc4,
    0x00,
    0x14,
    0x00,
    1,
    ...Array(15).fill(0),
    0x00,
    0xff,
    0xc4,
    0x00,
    0x14,
    0x10,
    1,
    ...Array(15).fill(0),
    0x00,
    0xff,
    0xda,
    0x00,
    0x08,
    0x01,
    0x01,
    0x00,
    0x00,
    0x3f,
    0x00,
    0x3f,
    0xff,
    0xd9,
  ]);
}

const dataUri = (mediaType: string, bytes: Buffer) => `data:${mediaType};base64,${bytes.toString('base64')}`;

const BOMBS: [string, () => string, string][] = [
  [
    'a PNG declaring 2147483647 x 2147483647 (crafted IHDR, valid CRCs)',
    () => dataUri('image/png', png(0x7fffffff, 0x7fffffff, { rows: 0 })),
    '2147483647 pixels wide',
  ],
  [
    'a 100000 x 100000 RGBA 16-bit PNG with a small zlib stream',
    () => dataUri('image/png', png(100000, 100000, { bitDepth: 16, colourType: 6, rows: 2 })),
    '100000 pixels wide',
  ],
  ['a JPEG whose SOF0 declares 65535 x 65535', () => dataUri('image/jpeg', jpeg(65535, 65535)), '65535 pixels wide'],
];

// --- the services ------------------------------------------------------------------------------------

/** The test config's credential types, with limits on MembershipCard's Photo. */
function photoLimits(limits: Record<string, number>): Record<string, unknown> {
  const types = structuredClone(testConfig(0).credentialTypes) as {
    name: string;
    attributes: Record<string, Record<string, unknown>>;
  }[];
  Object.assign(types.find((t) => t.name === 'MembershipCard')!.attributes.Photo, limits);
  return { credentialTypes: types };
}

let svc: TestService;
let strict: TestService;

beforeAll(async () => {
  [svc, strict] = await Promise.all([
    startTestService(),
    startTestService(photoLimits({ maxWidth: 64, maxHeight: 64, maxPixels: 2048 })),
  ]);
});
afterAll(async () => {
  await Promise.all([svc?.stop(), strict?.stop()]);
});
afterEach(() => {
  vi.restoreAllMocks();
});

interface VersionCase extends Version {
  scope: string;
}
const VERSIONS: VersionCase[] = [VERSION_2, VERSION_1].map((version) => ({
  ...version,
  scope: version.issue('MembershipCard'),
}));

/**
 * A MembershipCard issuance with `photo` pushed by `issuer-plain`, then the holder's browser from the
 * authorise URL to the relying party's redirect or to the prompt page. Reports whether an offer was created.
 */
async function authorise(service: TestService, vc: VersionCase, photo: string) {
  const createOffer = vi.spyOn(service.service.walletIssuer, 'createOffer');
  const state = `st-${randomBytes(8).toString('hex')}`;
  const par = await postForm(`${service.url}${vc.prefix}/par`, {
    client_id: 'issuer-plain',
    client_secret: SECRETS.plainIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: vc.scope,
    nonce: randomBytes(8).toString('hex'),
    state,
    id_token_hint: await makeHint({
      clientId: 'issuer-plain',
      secret: SECRETS.plainIssuer,
      audience: vc.issuerAt(service.url),
      claims: { MemberName: 'Ada Lovelace', MemberNumber: 1815, Photo: photo },
    }),
  });
  // the image is checked at authorise, where the spec places the TokenHint image row
  expect(par.status, JSON.stringify(par.body)).toBe(201);
  const authorizeUrl = `${service.url}${vc.prefix}/authorize?${new URLSearchParams({ client_id: 'issuer-plain', request_uri: par.body.request_uri })}`;
  const out = await new Browser(REDIRECT).follow(authorizeUrl);
  if (out.res) expect(out.res.status, `never a 500 (${out.final})`).toBeLessThan(500);
  return { state, out, offersCreated: createOffer.mock.calls.length };
}

/** The browser was redirected to the client with `invalid_request` naming Photo and the limit; no offer. */
function expectRefused(
  result: Awaited<ReturnType<typeof authorise>>,
  vc: VersionCase,
  service: TestService,
  ...names: string[]
): void {
  const { out, state, offersCreated } = result;
  expect(out.final.startsWith(REDIRECT), `expected a redirect to the client, stopped at ${out.final}`).toBe(true);
  const q = new URL(out.final).searchParams;
  expect(q.get('error'), q.toString()).toBe('invalid_request');
  const description = q.get('error_description') ?? '';
  expect(description).toContain("id_token_hint: image attribute 'Photo'");
  for (const name of names) expect(description).toContain(name);
  expect(q.get('state')).toBe(state);
  expect(q.get('code')).toBeNull();
  expect(q.get('iss')).toBe(vc.issuerAt(service.url)); // RFC 9207
  expect(offersCreated, 'no credential offer is created').toBe(0);
}

/** The browser reached the prompt page with a credential offer. */
function expectAccepted(result: Awaited<ReturnType<typeof authorise>>): void {
  const { out, offersCreated } = result;
  expect(out.final.startsWith(REDIRECT), `expected the prompt page, was redirected to ${out.final}`).toBe(false);
  expect(out.res!.status, out.html?.slice(0, 300)).toBe(200);
  expect(offerFromPage(out.html!)).toMatch(/^openid-credential-offer:\/\//);
  expect(offersCreated).toBe(1);
}

// --- the tests -------------------------------------------------------------------------------------------

describe.each(VERSIONS)('decompression bombs as image attributes are refused at authorise ($v)', (vc) => {
  it.each(BOMBS)(`%s -> redirected invalid_request naming maxWidth, no offer (${vc.v})`, async (_, photo, declared) => {
    expectRefused(await authorise(svc, vc, photo()), vc, svc, declared, 'over the limit of 4096 pixels (maxWidth)');
  });

  it(`a 4096 x 4096 PNG, at the default limits, reaches the prompt with an offer (${vc.v})`, async () => {
    const image = png(4096, 4096);
    expect(image.length).toBeLessThan(262144); // within the default maxBytes
    expectAccepted(await authorise(svc, vc, dataUri('image/png', image)));
  });
});

describe.each(VERSIONS)('configured limits (Photo: maxWidth 64, maxHeight 64, maxPixels 2048) ($v)', (vc) => {
  it(`a 64 x 64 PNG (4096 pixels) -> redirected invalid_request naming maxPixels, no offer (${vc.v})`, async () => {
    expectRefused(
      await authorise(strict, vc, dataUri('image/png', png(64, 64))),
      vc,
      strict,
      '64 x 64 = 4096 pixels',
      'over the limit of 2048 pixels (maxPixels)',
    );
  });

  it(`a 1 x 65 JPEG -> redirected invalid_request naming maxHeight, no offer (${vc.v})`, async () => {
    expectRefused(
      await authorise(strict, vc, dataUri('image/jpeg', jpeg(1, 65))),
      vc,
      strict,
      '65 pixels high',
      'over the limit of 64 pixels (maxHeight)',
    );
  });

  it(`a 32 x 64 PNG (2048 pixels) reaches the prompt with an offer (${vc.v})`, async () => {
    expectAccepted(await authorise(strict, vc, dataUri('image/png', png(32, 64))));
  });
});
