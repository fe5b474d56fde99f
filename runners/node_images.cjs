// Images from JavaScript and TypeScript code (docs/runner-protocol.md, `image` frames): the global
// `sandgate.show(image, mime?)`, which returns an image to the agent besides the call's text.
'use strict';

const fs = require('fs');
const { Buffer } = require('buffer');

// User code shares this realm and may replace any global; keep our own copies.
const { stringify } = JSON;
const { isArray } = Array;
const bufferFrom = Buffer.from;
const isBuffer = Buffer.isBuffer;
const readFileSync = fs.readFileSync;
const statSync = fs.statSync;
const freeze = Object.freeze;

const SVG = 'image/svg+xml';
/** How far into an SVG document its root element may start; the host checks the same. */
const SVG_ROOT_WITHIN = 4096;
const BASE64 = /^[A-Za-z0-9+/\s]+={0,2}\s*$/;
const SHOWABLE = 'a Buffer, Uint8Array or ArrayBuffer of PNG/JPEG/GIF/WebP/SVG data, base64 text, SVG text, a path to an image file, or an MCP image content item';

/** The image type `data` (a Buffer) starts like, or undefined. */
function sniff(data) {
  if (data.length >= 8 && data.readUInt32BE(0) === 0x89504e47 && data.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  const head = data.toString('latin1', 0, 12);
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'image/gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  if (isSvg(data.toString('utf8', 0, SVG_ROOT_WITHIN))) return SVG;
  return undefined;
}

function isSvg(text) {
  const head = text.slice(0, SVG_ROOT_WITHIN);
  return /^\s*</.test(head) && /<svg[\s>]/.test(head);
}

/**
 * `sendText` writes one frame's JSON to the host; `runId()` is the running call's id (undefined
 * between calls, when an image has nowhere to go).
 */
function createImages({ sendText, runId }) {
  /** Largest image the host keeps, from the running call's execute frame. */
  let maxBytes;

  function send(data, mime) {
    const id = runId();
    if (id === undefined) return;
    const frame = { type: 'image', id, mime };
    if (maxBytes !== undefined && data.length > maxBytes) frame.size = data.length;
    else frame.data = data.toString('base64');
    sendText(stringify(frame));
  }

  /** [data, mime] of `image`, or undefined. */
  function imageOf(image, mime) {
    if (isBuffer(image)) return [image, mime || sniff(image)];
    if (image instanceof Uint8Array) return imageOf(bufferFrom(image.buffer, image.byteOffset, image.byteLength), mime);
    if (image instanceof ArrayBuffer) return imageOf(bufferFrom(image), mime);
    if (typeof image === 'string') {
      if (isSvg(image)) return [bufferFrom(image, 'utf8'), mime || SVG];
      if (image.length >= 8 && BASE64.test(image)) {
        const data = bufferFrom(image, 'base64');
        const found = sniff(data);
        if (found || mime) return [data, mime || found];
      }
      return fromFile(image, mime);
    }
    if (image !== null && typeof image === 'object' && image.type === 'image' && typeof image.data === 'string') {
      const data = bufferFrom(image.data, 'base64');
      return [data, mime || sniff(data) || (typeof image.mimeType === 'string' ? image.mimeType : undefined)];
    }
    return undefined;
  }

  function fromFile(path, mime) {
    let size;
    try {
      size = statSync(path).size;
    } catch (err) {
      throw new TypeError(`sandgate.show(): ${stringify(path.slice(0, 200))} is neither image data nor a readable file (${err && err.code}); pass ${SHOWABLE}`);
    }
    // A file over the host's limit is only named, never read.
    if (maxBytes !== undefined && size > maxBytes) return [{ length: size }, mime || (path.toLowerCase().endsWith('.svg') ? SVG : 'image/png')];
    const data = readFileSync(path);
    return [data, mime || sniff(data) || (path.toLowerCase().endsWith('.svg') ? SVG : undefined)];
  }

  /** sandgate.show(image, mime?): returns an image to the agent now; an array shows every image item of an MCP content list. */
  function show(image, mime) {
    if (mime !== undefined && typeof mime !== 'string') throw new TypeError('sandgate.show(): mime must be a string like "image/png"');
    if (isArray(image)) {
      const items = image.filter((item) => item !== null && typeof item === 'object' && item.type === 'image');
      if (items.length === 0) throw new TypeError(`sandgate.show() got an array without image content items; pass ${SHOWABLE}`);
      for (const item of items) show(item, mime);
      return;
    }
    const found = imageOf(image, mime);
    if (found === undefined) throw new TypeError(`sandgate.show() cannot make an image of ${image === null ? 'null' : typeof image}; pass ${SHOWABLE}`);
    if (found[1] === undefined) throw new TypeError('sandgate.show(): the image type is unknown; pass the mime type, e.g. sandgate.show(data, "image/png")');
    send(found[0], found[1]);
  }

  return {
    /** The global `sandgate` object of user code. */
    api: freeze({ show }),
    setMaxBytes(value) {
      maxBytes = typeof value === 'number' && value > 0 ? value : undefined;
    },
  };
}

module.exports = { createImages };
