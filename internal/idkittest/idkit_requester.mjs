// A relying party's requester, played by World's own IDKit client
// (@worldcoin/idkit-core from npm, installed by .ci/run; see package
// worldid/internal/idkittest): it creates a
// World ID 3.0 request at the given bridge for an app, action and signal, prints the connect URL on one
// line, polls until the wallet answers, and prints the outcome as one JSON
// line ({"result": …} or {"error": …}).
//
// usage: node idkit_requester.mjs <2|4> <dir holding node_modules> <bridge URL> <app_id> <action> <signal> [rp_context JSON]
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

// stdout carries the protocol lines only: IDKit's console output goes to
// stderr.
console.log = console.error;
// IDKit 4 loads its WASM core with fetch(file://…), which Node's fetch
// does not serve: answer file URLs from the file system.
const nodeFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = input instanceof URL ? input : new URL(String(input.url ?? input));
  if (url.protocol !== "file:") return nodeFetch(input, init);
  return Promise.resolve(new Response(readFileSync(fileURLToPath(url)), { headers: { "Content-Type": "application/wasm" } }));
};

const [version, dir, bridgeURL, appID, action, signal, rpContext] = process.argv.slice(2);
const require = createRequire(path.join(dir, "requester.cjs"));
const idkit = require("@worldcoin/idkit-core");

function print(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

async function idkit2() {
  // IDKit 2 picks its crypto adapter by platform: Node 20 is neither a
  // browser nor React Native, but has WebCrypto as globalThis.crypto,
  // which is all the React Native adapter uses.
  if (typeof globalThis.navigator === "undefined") {
    globalThis.navigator = { product: "ReactNative" };
  }
  const store = idkit.createWorldBridgeStore();
  await store.getState().createClient({
    bridge_url: bridgeURL, app_id: appID, action, signal, verification_level: "device",
  });
  process.stdout.write(store.getState().connectorURI + "\n");
  for (;;) {
    await store.getState().pollForUpdates();
    const s = store.getState();
    if (s.verificationState === "confirmed") return print({ result: s.result });
    if (s.verificationState === "failed") return print({ error: s.errorCode });
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function idkit4() {
  const request = await idkit.IDKit.request({
    app_id: appID, action, rp_context: JSON.parse(rpContext), bridge_url: bridgeURL,
    allow_legacy_proofs: true, environment: "staging",
  }).preset(idkit.orbLegacy({ signal }));
  process.stdout.write(request.connectorURI + "\n");
  const done = await request.pollUntilCompletion({ pollInterval: 100, timeout: 120000 });
  print(done.success ? { result: done.result } : { error: done.error });
}

(version === "2" ? idkit2() : idkit4()).catch((e) => {
  print({ error: String(e && e.stack || e) });
  process.exit(1);
});
