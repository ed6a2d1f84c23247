import zlib from 'node:zlib';
import { describe, it, expect } from 'vitest';
import { attributeSchema, type CredentialType } from '../../../src/config/schema.js';
import { jpegProblem, pngProblem, validateImageDataUri, validateImages } from '../../../src/rules/images.js';
import { expectProtocolError } from './helpers.js';

// --- test images, built programmatically ------------------------------------------------------------

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}
function chunk(type: string, data: Buffer = Buffer.alloc(0), crc?: number): Buffer {
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32(data.length), td, u32(crc ?? zlib.crc32(td))]);
}
const PNG_SIG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
function ihdr(width = 1, height = 1, bitDepth = 8, colourType = 0): Buffer {
  return chunk('IHDR', Buffer.concat([u32(width), u32(height), Buffer.from([bitDepth, colourType, 0, 0, 0])]));
}
/** a 1x1 8-bit greyscale PNG: filter byte 0, one pixel 0x80 (checked once with pngjs: decodes to one grey pixel) */
const idat = () => chunk('IDAT', zlib.deflateSync(Buffer.from([0x00, 0x80])));
const iend = () => chunk('IEND');
const png = (...chunks: Buffer[]) => Buffer.concat([PNG_SIG, ...(chunks.length ? chunks : [ihdr(), idat(), iend()])]);

/**
 * A minimal baseline JPEG, 1x1 greyscale: SOI, DQT, SOF0, DHT (DC), DHT (AC), SOS, one byte of
 * entropy-coded data (DC category 0 + EOB, padded with 1s), EOI. Checked once with libjpeg-turbo
 * `djpeg -strict`: it decodes without warnings to a single grey pixel (128).
 */
const SOF0 = [0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00];
const jpegParts = {
  soi: [0xff, 0xd8],
  dqt: [0xff, 0xdb, 0x00, 0x43, 0x00, ...Array(64).fill(1)],
  sof: SOF0,
  dhtDc: [0xff, 0xc4, 0x00, 0x14, 0x00, 1, ...Array(15).fill(0), 0x00],
  dhtAc: [0xff, 0xc4, 0x00, 0x14, 0x10, 1, ...Array(15).fill(0), 0x00],
  sos: [0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00],
  scan: [0x3f],
  eoi: [0xff, 0xd9],
};
const jpeg = (over: Partial<Record<keyof typeof jpegParts, number[]>> = {}) =>
  Buffer.from(Object.entries({ ...jpegParts, ...over }).flatMap(([, v]) => v));

/** A frame header (SOF0 unless told) of the given size, one component, as in the minimal JPEG. */
const sof = (width: number, height: number, marker = 0xc0) => [
  0xff,
  marker,
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
];

const uri = (mediaType: string, bytes: Buffer) => `data:${mediaType};base64,${bytes.toString('base64')}`;

const withImage = (spec: Partial<CredentialType['attributes'][string]> = {}): CredentialType => ({
  name: 'Badge',
  validity: 'P365D',
  attributes: {
    Name: { type: 'string', required: true },
    Photo: { type: 'image', required: false, ...spec },
    Logo: { type: 'image', required: false },
  },
});

// --- tests ---------------------------------------------------------------------------------------------

describe('D9: an image attribute is a data: URI, base64', () => {
  it('accepts a valid PNG and a valid JPEG data URI, returning media type and decoded size (D9)', () => {
    expect(validateImageDataUri(uri('image/png', png()), {})).toEqual({
      mediaType: 'image/png',
      bytes: png().length,
      width: 1,
      height: 1,
    });
    expect(validateImageDataUri(uri('image/jpeg', jpeg()), {})).toEqual({
      mediaType: 'image/jpeg',
      bytes: jpeg().length,
      width: 1,
      height: 1,
    });
  });

  it('treats the media type case-insensitively (RFC 2045 5.1)', () => {
    expect(validateImageDataUri(uri('IMAGE/PNG', png()), {}).mediaType).toBe('image/png');
  });

  it.each([
    ['a plain string', 'hello'],
    ['an https URL', 'https://example.com/a.png'],
    ['a data URI without base64', `data:image/png,${png().toString('latin1')}`],
    ['a data URI with parameters', `data:image/png;charset=utf-8;base64,${png().toString('base64')}`],
    ['a data URI without media type', `data:;base64,${png().toString('base64')}`],
    ['a number', 42],
    ['null', null],
  ])('refuses %s as not a data URI, naming the attribute (D9)', (_, value) => {
    expectProtocolError(
      () => validateImageDataUri(value, { name: 'Photo' }),
      'invalid_request',
      'image attribute "Photo"',
      'data:<media type>;base64,<data>',
    );
  });

  it.each([
    ['padding missing', 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg'],
    ['characters outside the alphabet', 'iVBO*w0K'],
    ['base64url characters', 'iVBO-w0_'],
    ['whitespace', 'iVBO w0K'],
    ['too much padding', 'iVB==='],
    ['padding in the middle', 'iV==Bw0K'],
    ['non-canonical padding bits', 'AB=='],
    ['nothing at all', ''],
  ])('refuses invalid base64 (%s), naming the attribute (RFC 4648 4; D9)', (_, data) => {
    expectProtocolError(
      () => validateImageDataUri(`data:image/png;base64,${data}`, { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'not valid base64',
    );
  });
});

describe('D9: image/png or image/jpeg by default, configurable per attribute', () => {
  it('refuses a media type outside the defaults, listing the allowed ones (D9)', () => {
    expectProtocolError(
      () => validateImageDataUri(uri('image/gif', png()), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'media type',
      'image/png, image/jpeg',
    );
  });

  it('refuses image/jpeg when the attribute allows only image/png (D9, per attribute)', () => {
    expectProtocolError(
      () => validateImageDataUri(uri('image/jpeg', jpeg()), { formats: ['image/png'], name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'allowed: image/png',
    );
  });
});

describe('D9: default size limit 256 KiB decoded, configurable per attribute', () => {
  it('refuses an image over the per-attribute maxBytes, stating both sizes (D9)', () => {
    const bytes = png();
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', bytes), { maxBytes: bytes.length - 1, name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      `${bytes.length} bytes`,
      `limit of ${bytes.length - 1} bytes`,
    );
    expect(validateImageDataUri(uri('image/png', bytes), { maxBytes: bytes.length }).bytes).toBe(bytes.length);
  });

  it('refuses a valid PNG over the default 262144 bytes (D9)', () => {
    const big = png(
      ihdr(),
      chunk('tEXt', Buffer.concat([Buffer.from('Comment\0'), Buffer.alloc(262144, 0x41)])),
      idat(),
      iend(),
    );
    expect(pngProblem(big)).toBeUndefined();
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', big), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'limit of 262144 bytes',
    );
  });
});

describe('D9: the decoded bytes carry the format signature and parse as that format (PNG)', () => {
  it('accepts the generated 1x1 PNG (D9)', () => {
    expect(pngProblem(png())).toBeUndefined();
  });

  const cases: [string, () => Buffer, string][] = [
    ['a wrong signature', () => Buffer.concat([Buffer.from('GIF89a..'), ihdr(), idat(), iend()]), 'signature'],
    [
      'a bad CRC',
      () => png(ihdr(), chunk('IDAT', zlib.deflateSync(Buffer.from([0, 0x80])), 0x12345678), iend()),
      'bad CRC',
    ],
    [
      'a flipped data byte',
      () => {
        const b = png();
        b[b.length - 20] ^= 0xff;
        return b;
      },
      'bad CRC',
    ],
    ['truncated data', () => png().subarray(0, png().length - 6), 'truncated'],
    ['only the signature', () => PNG_SIG, 'IEND'],
    ['IHDR not first', () => png(idat(), ihdr(), iend()), 'IHDR'],
    ['IHDR of the wrong length', () => png(chunk('IHDR', Buffer.alloc(12)), idat(), iend()), 'IHDR'],
    ['zero width', () => png(ihdr(0, 1), idat(), iend()), 'width or height'],
    ['zero height', () => png(ihdr(1, 0), idat(), iend()), 'width or height'],
    ['an invalid bit depth for the colour type', () => png(ihdr(1, 1, 4, 2), idat(), iend()), 'bit depth'],
    ['a palette image without PLTE', () => png(ihdr(1, 1, 8, 3), idat(), iend()), 'PLTE'],
    ['no IEND', () => png(ihdr(), idat()), 'IEND'],
    ['data after IEND', () => Buffer.concat([png(), Buffer.from([0])]), 'after IEND'],
    ['no IDAT', () => png(ihdr(), iend()), 'IDAT'],
    ['a non-empty IEND', () => png(ihdr(), idat(), chunk('IEND', Buffer.from([1]))), 'IEND'],
    [
      'a chunk type that is not letters',
      () => png(ihdr(), chunk('ID1T', Buffer.alloc(1)), idat(), iend()),
      'chunk type',
    ],
    [
      'a chunk length past the end',
      () => {
        const b = png();
        b.writeUInt32BE(0x7ffffff0, 33);
        return b;
      },
      'truncated',
    ],
  ];
  it.each(cases)('refuses a PNG with %s, naming the attribute (D9)', (_, make, problem) => {
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', make()), { name: 'Photo' }),
      'invalid_request',
      'image attribute "Photo"',
      'not a valid image/png',
      problem,
    );
  });

  it('refuses PNG bytes labelled image/jpeg (D9, "that format\'s signature")', () => {
    expectProtocolError(
      () => validateImageDataUri(uri('image/jpeg', png()), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'not a valid image/jpeg',
      'SOI',
    );
  });
});

describe('D9: the decoded bytes carry the format signature and parse as that format (JPEG)', () => {
  it('accepts the constructed minimal baseline JPEG (D9)', () => {
    expect(jpegProblem(jpeg())).toBeUndefined();
  });

  it('accepts fill bytes before a marker and an APP0 segment (T.81 B.1.1.2)', () => {
    const app0 = [0xff, 0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0];
    expect(jpegProblem(jpeg({ soi: [0xff, 0xd8, ...app0] }))).toBeUndefined();
  });

  const cases: [string, () => Buffer, string][] = [
    ['a wrong signature', () => jpeg({ soi: [0xff, 0xd9] }), 'SOI'],
    ['no EOI at the end', () => jpeg({ eoi: [] }), 'EOI'],
    ['truncated scan data', () => jpeg().subarray(0, jpeg().length - 3), 'EOI'],
    ['truncated in a header segment', () => jpeg().subarray(0, 30), 'segment length'],
    ['no SOFn frame before SOS', () => jpeg({ sof: [] }), 'frame header'],
    ['a segment length past the end', () => jpeg({ dqt: [0xff, 0xdb, 0xff, 0xff, 0x00] }), 'segment length'],
    ['a segment length below 2', () => jpeg({ dqt: [0xff, 0xdb, 0x00, 0x01] }), 'segment length'],
    [
      'an inconsistent frame header',
      () => jpeg({ sof: [0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x02, 0x01, 0x11, 0x00] }),
      'frame header',
    ],
    [
      'a zero-width frame',
      () => jpeg({ sof: [0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x00, 0x01, 0x01, 0x11, 0x00] }),
      'frame header',
    ],
    [
      'an inconsistent scan header',
      () => jpeg({ sos: [0xff, 0xda, 0x00, 0x08, 0x02, 0x01, 0x00, 0x00, 0x3f, 0x00] }),
      'scan header',
    ],
    ['EOI before any scan', () => Buffer.from([...jpegParts.soi, ...jpegParts.sof, 0xff, 0xd9]), 'EOI before'],
    ['garbage where a marker should be', () => jpeg({ dqt: [0x00, 0x11] }), 'marker'],
    ['no SOS at all', () => Buffer.from([...jpegParts.soi, ...jpegParts.dqt, ...jpegParts.sof]), 'no scan'],
    ['a zero height (lines left to a DNL marker)', () => jpeg({ sof: sof(1, 0) }), 'zero width or height'],
    ['two frame headers', () => jpeg({ sof: [...sof(1, 1), ...sof(1, 1)] }), 'more than one frame header'],
    [
      'more than 4 components',
      () =>
        jpeg({
          sof: [
            0xff,
            0xc0,
            0x00,
            0x17,
            0x08,
            0x00,
            0x01,
            0x00,
            0x01,
            0x05,
            ...Array.from({ length: 5 }, (_, i) => [i + 1, 0x11, 0x00]).flat(),
          ],
        }),
      '5 components',
    ],
    [
      'a frame header image-size does not read (SOF9, arithmetic coding)',
      () => jpeg({ sof: sof(1, 1, 0xc9) }),
      'header cannot be read',
    ],
  ];
  it.each(cases)('refuses a JPEG with %s, naming the attribute (D9)', (_, make, problem) => {
    expectProtocolError(
      () => validateImageDataUri(uri('image/jpeg', make()), { name: 'Photo' }),
      'invalid_request',
      'image attribute "Photo"',
      'not a valid image/jpeg',
      problem,
    );
  });

  it('refuses a frame header that is not the one whose dimensions were read (a header image-size misread)', () => {
    expect(jpegProblem(jpeg(), { width: 1, height: 1 })).toBeUndefined();
    expect(jpegProblem(jpeg(), { width: 1, height: 2 })).toMatch(/frame header declares 1 x 1, not the 1 x 2/);
  });

  it('refuses JPEG bytes labelled image/png (D9)', () => {
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', jpeg()), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'not a valid image/png',
      'signature',
    );
  });
});

describe('D9: every present image attribute is checked with its template settings (spec Errors: TokenHint image -> invalid_request)', () => {
  it('accepts a template whose image attributes are absent or valid (D9)', () => {
    expect(() => validateImages({ Name: 'x' }, withImage())).not.toThrow();
    expect(() =>
      validateImages({ Name: 'x', Photo: uri('image/png', png()), Logo: uri('image/jpeg', jpeg()) }, withImage()),
    ).not.toThrow();
  });

  it('names the failing attribute (D4, D9)', () => {
    expectProtocolError(
      () => validateImages({ Photo: uri('image/png', png()), Logo: 'nope' }, withImage()),
      'invalid_request',
      '"Logo"',
    );
  });

  it("applies the attribute's formats and maxBytes (D9, per attribute)", () => {
    expectProtocolError(
      () => validateImages({ Photo: uri('image/png', png()) }, withImage({ formats: ['image/jpeg'] })),
      'invalid_request',
      '"Photo"',
      'allowed: image/jpeg',
    );
    expectProtocolError(
      () => validateImages({ Photo: uri('image/png', png()) }, withImage({ maxBytes: 10 })),
      'invalid_request',
      '"Photo"',
      'limit of 10 bytes',
    );
  });

  it('ignores non-image attributes (D9)', () => {
    expect(() => validateImages({ Name: 'data:image/png;base64,xx' }, withImage())).not.toThrow();
  });
});

// --- declared dimensions (issue "Hardening" 3: decompression bombs) ----------------------------------

/** A PNG whose IHDR declares width x height (valid CRCs), with a small zlib stream of `rows` zero rows. */
function pngDeclaring(
  width: number,
  height: number,
  opts: { bitDepth?: number; colourType?: number; rows?: number } = {},
): Buffer {
  const bitDepth = opts.bitDepth ?? 8;
  const colourType = opts.colourType ?? 0;
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colourType]!;
  const rowBytes = 1 + Math.ceil((width * channels * bitDepth) / 8);
  const rows = Math.min(opts.rows ?? height, height);
  return png(
    ihdr(width, height, bitDepth, colourType),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(rowBytes * rows))),
    iend(),
  );
}

describe('declared dimensions: maxWidth, maxHeight (4096 by default) and maxPixels (maxWidth * maxHeight by default)', () => {
  it('refuses a PNG declaring 2147483647 x 2147483647, naming the attribute and maxWidth, before reading its data', () => {
    const bomb = pngDeclaring(0x7fffffff, 0x7fffffff, { rows: 0 });
    expect(pngProblem(bomb)).toBeUndefined(); // a well-formed file: only the limits refuse it
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', bomb), { name: 'Photo' }),
      'invalid_request',
      'image attribute "Photo"',
      '2147483647 pixels wide',
      'limit of 4096 pixels (maxWidth)',
    );
  });

  it('refuses a 100000 x 100000 RGBA 16-bit PNG with a small zlib stream', () => {
    const bomb = pngDeclaring(100000, 100000, { bitDepth: 16, colourType: 6, rows: 2 });
    expect(bomb.length).toBeLessThan(262144);
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', bomb), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      '100000 pixels wide',
      'maxWidth',
    );
  });

  it('refuses a JPEG whose SOF0 declares 65535 x 65535', () => {
    const bomb = jpeg({ sof: sof(65535, 65535) });
    expect(jpegProblem(bomb)).toBeUndefined();
    expectProtocolError(
      () => validateImageDataUri(uri('image/jpeg', bomb), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      '65535 pixels wide',
      'limit of 4096 pixels (maxWidth)',
    );
  });

  it('refuses a height over maxHeight, naming maxHeight', () => {
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', pngDeclaring(1, 4097)), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      '4097 pixels high',
      'limit of 4096 pixels (maxHeight)',
    );
    expectProtocolError(
      () => validateImageDataUri(uri('image/jpeg', jpeg({ sof: sof(1, 4097) })), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'maxHeight',
    );
  });

  it('accepts a 4096 x 4096 PNG and JPEG, at the default limits', () => {
    const atLimit = pngDeclaring(4096, 4096);
    expect(validateImageDataUri(uri('image/png', atLimit), { name: 'Photo' })).toMatchObject({
      width: 4096,
      height: 4096,
    });
    expect(validateImageDataUri(uri('image/jpeg', jpeg({ sof: sof(4096, 4096) })), { name: 'Photo' })).toMatchObject({
      width: 4096,
      height: 4096,
    });
  });

  it('applies configured maxWidth, maxHeight and maxPixels, naming the one exceeded', () => {
    const image = uri('image/png', pngDeclaring(64, 32));
    expect(validateImageDataUri(image, { maxWidth: 64, maxHeight: 32, maxPixels: 2048 })).toMatchObject({
      width: 64,
      height: 32,
    });
    expectProtocolError(
      () => validateImageDataUri(image, { maxWidth: 63, name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'limit of 63 pixels (maxWidth)',
    );
    expectProtocolError(
      () => validateImageDataUri(image, { maxHeight: 31, name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'limit of 31 pixels (maxHeight)',
    );
    expectProtocolError(
      () => validateImageDataUri(image, { maxPixels: 2047, name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      '64 x 32 = 2048 pixels',
      'limit of 2047 pixels (maxPixels)',
    );
  });

  it('defaults maxPixels to the configured maxWidth * maxHeight', () => {
    expect(validateImageDataUri(uri('image/png', pngDeclaring(8192, 2)), { maxWidth: 8192 })).toMatchObject({
      width: 8192,
    });
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', pngDeclaring(2, 2)), { maxWidth: 1, maxHeight: 4 }),
      'invalid_request',
      'maxWidth',
    );
  });

  it("applies the attribute's maxWidth, maxHeight and maxPixels from the template", () => {
    const image = uri('image/jpeg', jpeg({ sof: sof(100, 50) }));
    expect(() => validateImages({ Photo: image }, withImage())).not.toThrow();
    expectProtocolError(
      () => validateImages({ Photo: image }, withImage({ maxWidth: 99 })),
      'invalid_request',
      '"Photo"',
      'limit of 99 pixels (maxWidth)',
    );
    expectProtocolError(
      () => validateImages({ Photo: image }, withImage({ maxHeight: 49 })),
      'invalid_request',
      '"Photo"',
      'limit of 49 pixels (maxHeight)',
    );
    expectProtocolError(
      () => validateImages({ Photo: image }, withImage({ maxPixels: 4999 })),
      'invalid_request',
      '"Photo"',
      'limit of 4999 pixels (maxPixels)',
    );
    expect(() => validateImages({ Photo: image, Logo: image }, withImage({ maxPixels: 5000 }))).not.toThrow();
  });

  it('checks the limits before the structure: an over-limit file is refused for its size even when malformed', () => {
    const bomb = pngDeclaring(100000, 100000, { rows: 1 });
    bomb[bomb.length - 20] ^= 0xff; // a bad CRC in IDAT
    expectProtocolError(
      () => validateImageDataUri(uri('image/png', bomb), { name: 'Photo' }),
      'invalid_request',
      '"Photo"',
      'maxWidth',
    );
  });
});

describe('config: image limits per attribute (attributeSchema)', () => {
  it('accepts maxWidth, maxHeight and maxPixels on an image attribute', () => {
    expect(
      attributeSchema.parse({ type: 'image', maxWidth: 512, maxHeight: 256, maxPixels: 100000, maxBytes: 65536 }),
    ).toMatchObject({ maxWidth: 512, maxHeight: 256, maxPixels: 100000 });
  });

  it('refuses them on an attribute that is not an image, and values that are not positive integers', () => {
    const issues = (v: unknown) =>
      attributeSchema.safeParse(v).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(issues({ type: 'string', maxWidth: 10, maxPixels: 10 })).toEqual([
      'maxWidth: maxWidth applies to image attributes only',
      'maxPixels: maxPixels applies to image attributes only',
    ]);
    expect(issues({ type: 'image', maxWidth: 0 })).toHaveLength(1);
    expect(issues({ type: 'image', maxHeight: 1.5 })).toHaveLength(1);
    expect(issues({ type: 'image', maxWidth: 2 ** 31 })).toHaveLength(1);
  });
});
