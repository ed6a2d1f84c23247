import zlib from 'node:zlib';
import { describe, it, expect } from 'vitest';
import type { CredentialType } from '../../../src/config/schema.js';
import { crc32, crc32Table, jpegProblem, pngProblem, validateImageDataUri, validateImages } from '../../../src/rules/images.js';
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
    expect(validateImageDataUri(uri('image/png', png()), {})).toEqual({ mediaType: 'image/png', bytes: png().length });
    expect(validateImageDataUri(uri('image/jpeg', jpeg()), {})).toEqual({ mediaType: 'image/jpeg', bytes: jpeg().length });
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
    expectProtocolError(() => validateImageDataUri(value, { name: 'Photo' }), 'invalid_request', 'image attribute "Photo"', 'data:<media type>;base64,<data>');
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
    expectProtocolError(() => validateImageDataUri(`data:image/png;base64,${data}`, { name: 'Photo' }), 'invalid_request', '"Photo"', 'not valid base64');
  });
});

describe('D9: image/png or image/jpeg by default, configurable per attribute', () => {
  it('refuses a media type outside the defaults, listing the allowed ones (D9)', () => {
    expectProtocolError(() => validateImageDataUri(uri('image/gif', png()), { name: 'Photo' }), 'invalid_request', '"Photo"', 'media type', 'image/png, image/jpeg');
  });

  it('refuses image/jpeg when the attribute allows only image/png (D9, per attribute)', () => {
    expectProtocolError(() => validateImageDataUri(uri('image/jpeg', jpeg()), { formats: ['image/png'], name: 'Photo' }), 'invalid_request', '"Photo"', 'allowed: image/png');
  });
});

describe('D9: default size limit 256 KiB decoded, configurable per attribute', () => {
  it('refuses an image over the per-attribute maxBytes, stating both sizes (D9)', () => {
    const bytes = png();
    expectProtocolError(() => validateImageDataUri(uri('image/png', bytes), { maxBytes: bytes.length - 1, name: 'Photo' }), 'invalid_request', '"Photo"', `${bytes.length} bytes`, `limit of ${bytes.length - 1} bytes`);
    expect(validateImageDataUri(uri('image/png', bytes), { maxBytes: bytes.length }).bytes).toBe(bytes.length);
  });

  it('refuses a valid PNG over the default 262144 bytes (D9)', () => {
    const big = png(ihdr(), chunk('tEXt', Buffer.concat([Buffer.from('Comment\0'), Buffer.alloc(262144, 0x41)])), idat(), iend());
    expect(pngProblem(big)).toBeUndefined();
    expectProtocolError(() => validateImageDataUri(uri('image/png', big), { name: 'Photo' }), 'invalid_request', '"Photo"', 'limit of 262144 bytes');
  });
});

describe('D9: the decoded bytes carry the format signature and parse as that format (PNG)', () => {
  it('accepts the generated 1x1 PNG (D9)', () => {
    expect(pngProblem(png())).toBeUndefined();
  });

  const cases: [string, () => Buffer, string][] = [
    ['a wrong signature', () => Buffer.concat([Buffer.from('GIF89a..'), ihdr(), idat(), iend()]), 'signature'],
    ['a bad CRC', () => png(ihdr(), chunk('IDAT', zlib.deflateSync(Buffer.from([0, 0x80])), 0x12345678), iend()), 'bad CRC'],
    ['a flipped data byte', () => { const b = png(); b[b.length - 20] ^= 0xff; return b; }, 'bad CRC'],
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
    ['a chunk type that is not letters', () => png(ihdr(), chunk('ID1T', Buffer.alloc(1)), idat(), iend()), 'chunk type'],
    ['a chunk length past the end', () => { const b = png(); b.writeUInt32BE(0x7ffffff0, 33); return b; }, 'truncated'],
  ];
  it.each(cases)('refuses a PNG with %s, naming the attribute (D9)', (_, make, problem) => {
    expectProtocolError(() => validateImageDataUri(uri('image/png', make()), { name: 'Photo' }), 'invalid_request', 'image attribute "Photo"', 'not a valid image/png', problem);
  });

  it('refuses PNG bytes labelled image/jpeg (D9, "that format\'s signature")', () => {
    expectProtocolError(() => validateImageDataUri(uri('image/jpeg', png()), { name: 'Photo' }), 'invalid_request', '"Photo"', 'not a valid image/jpeg', 'SOI');
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
    ['an inconsistent frame header', () => jpeg({ sof: [0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x02, 0x01, 0x11, 0x00] }), 'frame header'],
    ['a zero-width frame', () => jpeg({ sof: [0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x00, 0x01, 0x01, 0x11, 0x00] }), 'frame header'],
    ['an inconsistent scan header', () => jpeg({ sos: [0xff, 0xda, 0x00, 0x08, 0x02, 0x01, 0x00, 0x00, 0x3f, 0x00] }), 'scan header'],
    ['EOI before any scan', () => Buffer.from([...jpegParts.soi, ...jpegParts.sof, 0xff, 0xd9]), 'EOI before'],
    ['garbage where a marker should be', () => jpeg({ dqt: [0x00, 0x11] }), 'marker'],
    ['no SOS at all', () => Buffer.from([...jpegParts.soi, ...jpegParts.dqt, ...jpegParts.sof]), 'no scan'],
  ];
  it.each(cases)('refuses a JPEG with %s, naming the attribute (D9)', (_, make, problem) => {
    expectProtocolError(() => validateImageDataUri(uri('image/jpeg', make()), { name: 'Photo' }), 'invalid_request', 'image attribute "Photo"', 'not a valid image/jpeg', problem);
  });

  it('refuses JPEG bytes labelled image/png (D9)', () => {
    expectProtocolError(() => validateImageDataUri(uri('image/png', jpeg()), { name: 'Photo' }), 'invalid_request', '"Photo"', 'not a valid image/png', 'signature');
  });
});

describe('D9: every present image attribute is checked with its template settings (spec Errors: TokenHint image -> invalid_request)', () => {
  it('accepts a template whose image attributes are absent or valid (D9)', () => {
    expect(() => validateImages({ Name: 'x' }, withImage())).not.toThrow();
    expect(() => validateImages({ Name: 'x', Photo: uri('image/png', png()), Logo: uri('image/jpeg', jpeg()) }, withImage())).not.toThrow();
  });

  it('names the failing attribute (D4, D9)', () => {
    expectProtocolError(() => validateImages({ Photo: uri('image/png', png()), Logo: 'nope' }, withImage()), 'invalid_request', '"Logo"');
  });

  it("applies the attribute's formats and maxBytes (D9, per attribute)", () => {
    expectProtocolError(() => validateImages({ Photo: uri('image/png', png()) }, withImage({ formats: ['image/jpeg'] })), 'invalid_request', '"Photo"', 'allowed: image/jpeg');
    expectProtocolError(() => validateImages({ Photo: uri('image/png', png()) }, withImage({ maxBytes: 10 })), 'invalid_request', '"Photo"', 'limit of 10 bytes');
  });

  it('ignores non-image attributes (D9)', () => {
    expect(() => validateImages({ Name: 'data:image/png;base64,xx' }, withImage())).not.toThrow();
  });
});

describe('PNG CRC-32 (PNG annex D)', () => {
  it('computes the well-known CRC of the IEND chunk type with both implementations', () => {
    expect(crc32(Buffer.from('IEND'))).toBe(0xae426082);
    expect(crc32Table(Buffer.from('IEND'))).toBe(0xae426082);
  });

  it('matches zlib.crc32 on arbitrary data with the table implementation', () => {
    const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7919) & 0xff));
    expect(crc32Table(data)).toBe(zlib.crc32(data) >>> 0);
  });
});
