// Checks trace2d's OTLP output with the official OpenTelemetry definitions
// (the protobufjs module of @opentelemetry/otlp-transformer 0.216.0, which
// .ci/deps installs). Prints one JSON object; the C++ tests assert on it.
//
//   node otlp_check.js <decoder dir> compare <request.pb> <request.json>
//     Decodes the protobuf request and compares it, field by field, with the
//     OTLP/JSON encoding of the same request: {"same":true,"spans":N} or the
//     first difference.
//   node otlp_check.js <decoder dir> tree <request.pb|request.json>
//     Checks a process tree's spans: trace2receiver's ids computed here from
//     trace2.cmd.sid, every parent present (except where a process's parent
//     is outside the export), no duplicate span ids, regions inside their
//     parent's time. Prints the spans by name with their parent's name.
'use strict';
const fs = require('fs');
const crypto = require('crypto');

const [decoderDir, mode, ...files] = process.argv.slice(2);
const root = require(require('path').resolve(decoderDir) + '/node_modules/@opentelemetry/otlp-transformer/build/src/generated/root');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

// The canonical OTLP/JSON shape of a decoded message: bytes as hex, 64-bit
// integers as decimal strings, enums as numbers.
function canonical(value, key) {
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (value && typeof value === 'object' && typeof value.low === 'number' && typeof value.high === 'number') {
    const bits = (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
    return (value.unsigned ? BigInt.asUintN(64, bits) : BigInt.asIntN(64, bits)).toString();
  }
  if (Array.isArray(value)) return value.map((v) => canonical(v));
  if (value && typeof value === 'object') {
    const out = {};
    for (const k of Object.keys(value)) out[k] = canonical(value[k], k);
    return out;
  }
  return value;
}

function decodePb(file) {
  const message = Request.decode(fs.readFileSync(file));
  const err = Request.verify(message);
  if (err) throw new Error('not a valid ExportTraceServiceRequest: ' + err);
  return canonical(Request.toObject(message, { longs: Object, bytes: Buffer, enums: Number, defaults: false }));
}

function load(file) {
  return file.endsWith('.json') ? JSON.parse(fs.readFileSync(file, 'utf8')) : decodePb(file);
}

// OTLP/JSON writes int64 attribute values as strings; protobufjs gives them as
// strings too after canonical(); both sides compare as strings.
function normalise(value) {
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === 'object') {
    const out = {};
    for (const k of Object.keys(value).sort()) {
      const v = value[k];
      if (v === undefined || (Array.isArray(v) && v.length === 0 && k !== 'values')) continue;
      out[k] = normalise(v);
    }
    return out;
  }
  return typeof value === 'number' ? String(value) : value;
}

function firstDifference(a, b, path) {
  if (typeof a !== typeof b) return `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (a && typeof a === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = firstDifference(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

function spansOf(request) {
  const spans = [];
  for (const rs of request.resourceSpans || []) for (const ss of rs.scopeSpans || []) spans.push(...(ss.spans || []));
  return spans;
}

function attr(span, key) {
  const found = (span.attributes || []).find((a) => a.key === key);
  if (!found) return undefined;
  const v = found.value;
  return v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue ?? v.arrayValue;
}

function sha256(text) { return crypto.createHash('sha256').update(text, 'utf8').digest('hex'); }

if (mode === 'compare') {
  const pb = normalise(decodePb(files[0]));
  const json = normalise(JSON.parse(fs.readFileSync(files[1], 'utf8')));
  const difference = firstDifference(pb, json, '$');
  console.log(JSON.stringify(difference ? { same: false, difference } : { same: true, spans: spansOf(pb).length }));
} else if (mode === 'tree') {
  const spans = spansOf(load(files[0]));
  const byId = new Map();
  const problems = [];
  for (const s of spans) {
    if (byId.has(s.spanId)) problems.push(`duplicate span id ${s.spanId} (${s.name})`);
    byId.set(s.spanId, s);
  }
  const out = [];
  for (const s of spans) {
    const sid = attr(s, 'trace2.cmd.sid');
    const type = attr(s, 'trace2.span.type');
    const parent = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
    if (type === 'process') {
      const parts = sid.split('/');
      // A tree re-rooted for ownership (trace2d.tree_sid, docs/otlp.md): its
      // trace is the whole tree_sid's, and its top has no parent.
      const tree = attr(s, 'trace2d.tree_sid');
      const trace = tree ? sha256(tree).slice(0, 32) : sha256(parts[0]).slice(0, 32);
      if (s.traceId !== trace) problems.push(`${sid}: trace id ${s.traceId}`);
      if (s.spanId !== sha256(parts[parts.length - 1]).slice(32, 48)) problems.push(`${sid}: span id ${s.spanId}`);
      if (tree === sid && s.parentSpanId) problems.push(`${sid}: the top of a re-rooted tree has a parent`);
      if (parts.length > 1 && tree !== sid && !s.parentSpanId) problems.push(`${sid}: no parent`);
      if (s.parentSpanId && !parent && s.parentSpanId !== sha256(parts[parts.length - 2]).slice(32, 48)) {
        problems.push(`${sid}: parent ${s.parentSpanId} is neither in the export nor its parent process`);
      }
    } else if (!parent) {
      problems.push(`${s.name}: parent ${s.parentSpanId} missing`);
    }
    // Regions nest strictly, and a child git runs within its child span (a
    // git that replaced its process, within its exec span); a child process
    // may outlive the region it was started in (git's transport helper
    // does), so child spans are not held to it.
    const launcher = parent && ['child', 'exec'].includes(attr(parent, 'trace2.span.type'));
    if (parent && (type === 'region' || (type === 'process' && launcher))) {
      const [ps, pe, cs, ce] = [parent.startTimeUnixNano, parent.endTimeUnixNano, s.startTimeUnixNano, s.endTimeUnixNano].map(BigInt);
      // git rounds its times to microseconds on both ends: allow 2 µs.
      if (cs + 2000n < ps || ce > pe + 2000n) problems.push(`${s.name} [${cs}, ${ce}] outside ${parent.name} [${ps}, ${pe}]`);
    }
    out.push({ name: s.name, type, parent: parent ? parent.name : null, status: s.status ? s.status.code : 0,
               message: s.status ? s.status.message : undefined, sid, events: (s.events || []).length,
               nickname: attr(s, 'trace2.repo.nickname'), detail: attr(s, 'trace2d.detail'),
               regions: attr(s, 'trace2d.summary.regions'), exe: attr(s, 'trace2.exec.exe'),
               placed_by: attr(s, 'trace2d.placed_by'), trace: s.traceId });
  }
  console.log(JSON.stringify({ spans: out, problems }));
} else {
  console.error('usage: node otlp_check.js <decoder dir> compare|tree <files>');
  process.exit(2);
}
