import zlib from 'node:zlib';
import { imageSize } from 'image-size';
import type { CredentialType } from '../config/schema.js';
import { invalidRequest } from './errors.js';
import { shown } from './text.js';

/** D9: defaults for image attributes. */
export const DEFAULT_IMAGE_FORMATS: readonly string[] = ['image/png', 'image/jpeg'];
export const DEFAULT_IMAGE_MAX_BYTES = 262144;
/** Declared dimension limits (issue "Hardening" 3); maxPixels defaults to maxWidth * maxHeight. */
export const DEFAULT_IMAGE_MAX_WIDTH = 4096;
export const DEFAULT_IMAGE_MAX_HEIGHT = 4096;

export interface ImageLimits {
  formats?: readonly string[];
  maxBytes?: number;
  maxWidth?: number;
  maxHeight?: number;
  maxPixels?: number;
  /** the attribute name used in descriptions (default "image") */
  name?: string;
}

const DATA_URI = /^data:([A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+);base64,(.*)$/s;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** image-size's name for each accepted media type, and the part of the header that declares the size. */
const FORMATS: Record<string, { type: string; header: string }> = {
  'image/png': { type: 'png', header: 'IHDR' },
  'image/jpeg': { type: 'jpg', header: 'frame header (SOFn)' },
};

/**
 * Validates one image claim (spec Errors: TokenHint image "Images not valid" -> invalid_request; D9).
 * Nothing is decoded or inflated: the declared dimensions are read from the header and checked against
 * the limits first, then the file's structure.
 */
export function validateImageDataUri(
  value: unknown,
  opts: ImageLimits,
): { mediaType: string; bytes: number; width: number; height: number } {
  const label = `id_token_hint: image attribute ${shown(opts.name ?? 'image')}`;
  const bad = (reason: string) => invalidRequest(`${label} ${reason}`);
  const formats = opts.formats ?? DEFAULT_IMAGE_FORMATS;
  const maxBytes = opts.maxBytes ?? DEFAULT_IMAGE_MAX_BYTES;
  const maxWidth = opts.maxWidth ?? DEFAULT_IMAGE_MAX_WIDTH;
  const maxHeight = opts.maxHeight ?? DEFAULT_IMAGE_MAX_HEIGHT;
  const maxPixels = opts.maxPixels ?? maxWidth * maxHeight;

  // D9: a data: URI, base64 (RFC 2397)
  const m = typeof value === 'string' ? DATA_URI.exec(value) : null;
  if (!m) throw bad('is not a data:<media type>;base64,<data> URI');
  const mediaType = m[1].toLowerCase(); // RFC 2045 5.1: type and subtype are case-insensitive
  const data = m[2];
  // D9: image/png or image/jpeg by default, narrowed per attribute
  const format = FORMATS[mediaType];
  if (!formats.includes(mediaType) || !format) {
    throw bad(`has a media type that is not allowed (allowed: ${formats.join(', ')})`);
  }
  // RFC 4648 4: strict alphabet and padding, canonical encoding
  if (data === '' || data.length % 4 !== 0 || !BASE64.test(data)) throw bad('is not valid base64 (RFC 4648 section 4)');
  // D9: size limit on decoded bytes, computed before decoding
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const decodedLength = (data.length / 4) * 3 - padding;
  if (decodedLength > maxBytes) throw bad(`is ${decodedLength} bytes decoded, over the limit of ${maxBytes} bytes`);
  const bytes = Buffer.from(data, 'base64');
  if (bytes.toString('base64') !== data) throw bad('is not valid base64 (non-canonical padding bits)');
  const invalid = (problem: string) => bad(`is not a valid ${mediaType}: ${problem}`);

  // D9: the format's signature. Checked here because image-size's PNG test skips the first byte and its
  // detector falls back to trying every format.
  const signature = mediaType === 'image/png' ? signatureProblemPng(bytes) : signatureProblemJpeg(bytes);
  if (signature) throw invalid(signature);

  const structureProblem = (declared?: { width: number; height: number }) =>
    mediaType === 'image/png' ? pngProblem(bytes) : jpegProblem(bytes, declared);

  // The declared dimensions, read from the header by image-size (no pixel is decoded).
  let size: { width: number; height: number; type?: string };
  try {
    size = imageSize(bytes);
  } catch (e) {
    // a malformed file: the structure check says where, which is more use than image-size's message
    throw invalid(structureProblem() ?? `its header cannot be read (${(e as Error).message})`);
  }
  if (size.type !== format.type) throw invalid(`its header is not a ${mediaType} header`);
  const { width, height } = size;
  if (!(width > 0 && height > 0)) throw invalid(`the ${format.header} declares a zero width or height`);

  // Limits on what a decoder would allocate, before anything else reads the data (issue "Hardening" 3).
  if (width > maxWidth) throw bad(`is ${width} pixels wide, over the limit of ${maxWidth} pixels (maxWidth)`);
  if (height > maxHeight) throw bad(`is ${height} pixels high, over the limit of ${maxHeight} pixels (maxHeight)`);
  if (width * height > maxPixels) {
    throw bad(`is ${width} x ${height} = ${width * height} pixels, over the limit of ${maxPixels} pixels (maxPixels)`);
  }

  // D9: parses as that format (structure, without decoding), and the header a decoder would use is the
  // one whose dimensions were checked.
  const problem = structureProblem({ width, height });
  if (problem) throw invalid(problem);
  return { mediaType, bytes: bytes.length, width, height };
}

/** Checks every present image attribute with its template settings (D9). */
export function validateImages(attributes: Record<string, unknown>, type: CredentialType): void {
  for (const [name, spec] of Object.entries(type.attributes)) {
    if (spec.type !== 'image' || !Object.hasOwn(attributes, name) || attributes[name] === undefined) continue;
    const { formats, maxBytes, maxWidth, maxHeight, maxPixels } = spec;
    validateImageDataUri(attributes[name], { formats, maxBytes, maxWidth, maxHeight, maxPixels, name });
  }
}

// ---------------------------------------------------------------------------------------------------
// Structure checks, kept here because no maintained library checks a file's structure without decoding
// it: image-size reads the header only, and the decoders (pngjs, fast-png, jpeg-js, sharp) inflate and
// decode every pixel, which is the allocation these limits exist to avoid.

// PNG (ISO/IEC 15948, W3C PNG 3rd ed. section 5)

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** PNG 11.2.2: allowed bit depths per colour type. */
const PNG_BIT_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

function signatureProblemPng(buf: Buffer): string | undefined {
  // PNG 5.2: 8-byte signature
  return buf.length < 8 || !buf.subarray(0, 8).equals(PNG_SIGNATURE) ? 'missing PNG signature' : undefined;
}

/**
 * Returns what is wrong with a PNG's chunk structure, or undefined when it is valid. The IDAT data is
 * not inflated. IHDR must be the first chunk, where image-size reads the dimensions.
 */
export function pngProblem(buf: Buffer): string | undefined {
  const signature = signatureProblemPng(buf);
  if (signature) return signature;
  let offset = 8;
  let index = 0;
  let sawIdat = false;
  let sawPlte = false;
  let colourType = -1;
  while (offset < buf.length) {
    // PNG 5.3: length (4), type (4), data (length), CRC (4)
    if (offset + 12 > buf.length) return 'truncated chunk header';
    const length = buf.readUInt32BE(offset);
    if (length > 0x7fffffff) return 'chunk length out of range';
    const type = buf.toString('latin1', offset + 4, offset + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) return 'invalid chunk type';
    const end = offset + 8 + length;
    if (end + 4 > buf.length) return `chunk ${type} is truncated`;
    // PNG 5.3: CRC over chunk type and data
    if (zlib.crc32(buf.subarray(offset + 4, end)) >>> 0 !== buf.readUInt32BE(end)) return `chunk ${type} has a bad CRC`;
    const data = buf.subarray(offset + 8, end);

    if (index === 0) {
      // PNG 5.6 / 11.2.2: IHDR first, 13 bytes (its dimensions are checked from image-size's reading)
      if (type !== 'IHDR' || length !== 13) return 'first chunk is not a 13-byte IHDR';
      colourType = data[9];
      if (!PNG_BIT_DEPTHS[colourType]?.includes(data[8])) return 'IHDR has an invalid bit depth / colour type';
      if (data[10] !== 0 || data[11] !== 0 || data[12] > 1)
        return 'IHDR has an invalid compression, filter or interlace method';
    } else if (type === 'IHDR') {
      return 'IHDR appears more than once';
    }
    if (type === 'PLTE') sawPlte = true;
    if (type === 'IDAT') sawIdat = true;
    offset = end + 4;
    index++;
    if (type === 'IEND') {
      // PNG 5.6: IEND is the last chunk, empty
      if (length !== 0) return 'IEND is not empty';
      if (offset !== buf.length) return 'data after IEND';
      if (!sawIdat) return 'no IDAT chunk';
      if (colourType === 3 && !sawPlte) return 'palette image without PLTE';
      return undefined;
    }
  }
  return 'does not end with IEND';
}

// JPEG (ITU-T T.81 annex B)

function signatureProblemJpeg(buf: Buffer): string | undefined {
  // T.81 B.2.1: SOI first, then a marker
  return buf.length < 4 || buf[0] !== 0xff || buf[1] !== 0xd8 || buf[2] !== 0xff
    ? 'missing JPEG SOI marker'
    : undefined;
}

/** T.81 table B.1: SOFn markers (C4 DHT, C8 JPG and CC DAC are not frame headers). */
const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
/** Grey, YCbCr, CMYK/YCCK: more components only multiply what a decoder allocates per pixel. */
const JPEG_MAX_COMPONENTS = 4;

/**
 * Returns what is wrong with a JPEG's marker structure, or undefined when it is valid. With `declared`
 * (image-size's reading), the one frame header must declare those dimensions: a file whose header
 * image-size misreads cannot pass with dimensions a decoder would not use.
 */
export function jpegProblem(buf: Buffer, declared?: { width: number; height: number }): string | undefined {
  const signature = signatureProblemJpeg(buf);
  if (signature) return signature;
  let offset = 2;
  let frame: { width: number; height: number } | undefined;
  while (offset < buf.length) {
    // T.81 B.1.1.2: a marker is 0xFF followed by a code; extra 0xFF are fill bytes
    if (buf[offset] !== 0xff) return 'expected a marker';
    while (offset < buf.length && buf[offset] === 0xff) offset++;
    if (offset >= buf.length) return 'truncated marker';
    const marker = buf[offset++];
    if (marker === 0x00) return 'invalid marker';
    if (marker === 0xd8) return 'unexpected SOI marker';
    if (marker === 0xd9) return 'EOI before any scan';
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // TEM, RSTn: no length
    // T.81 B.1.1.4: 2-byte segment length including itself, inside the buffer
    if (offset + 2 > buf.length) return 'truncated segment length';
    const length = buf.readUInt16BE(offset);
    if (length < 2 || offset + length > buf.length) return 'segment length outside the data';
    const segment = buf.subarray(offset + 2, offset + length);
    if (isSof(marker)) {
      // T.81 B.2.2: frame header P, Y, X, Nf, then 3 bytes per component; one frame (non-hierarchical)
      if (frame) return 'more than one frame header (SOFn)';
      if (segment.length < 6) return 'frame header too short';
      const components = segment[5];
      frame = { height: segment.readUInt16BE(1), width: segment.readUInt16BE(3) };
      if (frame.width === 0 || components === 0 || segment.length !== 6 + 3 * components) return 'invalid frame header';
      if (components > JPEG_MAX_COMPONENTS)
        return `frame header has ${components} components (at most ${JPEG_MAX_COMPONENTS})`;
    }
    offset += length;
    if (marker === 0xda) {
      // T.81 B.2.3: scan header Ns, 2 bytes per component, Ss, Se, Ah/Al
      if (segment.length < 1 || segment.length !== 4 + 2 * segment[0]) return 'invalid scan header';
      if (!frame) return 'scan before any frame header (SOFn)';
      if (declared && (frame.width !== declared.width || frame.height !== declared.height)) {
        return `frame header declares ${frame.width} x ${frame.height}, not the ${declared.width} x ${declared.height} read from the header`;
      }
      // T.81 B.2.1: entropy-coded data follows, and the image ends with EOI
      if (buf.length < offset + 2 || buf[buf.length - 2] !== 0xff || buf[buf.length - 1] !== 0xd9)
        return 'does not end with EOI';
      return undefined;
    }
  }
  return 'no scan (SOS) found';
}
