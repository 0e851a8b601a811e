# SPDX-License-Identifier: MPL-2.0
"""Checks deploy/: every manifest parses (Kubernetes YAML, RabbitMQ JSON, systemd units), and
everything it names exists in the code: binaries (in RT_TEST_BIN_DIR), their flags (from
--help), configuration keys and RETRIG_* environment variables (from `retrig config --keys`),
the Secret keys and ConfigMap they mount, the queues KEDA watches, and the RabbitMQ queues
with the very arguments the workers declare (common/io/amqp.c: work queues dead-letter to
<ns>.dlx, delay queues <queue>.delay.<ms> expire back to <ns> with the queue's routing key,
one per default delay).

Run by ctest with /usr/bin/python3; env RT_TEST_SOURCE_DIR (repo root) and RT_TEST_BIN_DIR
(build/bin). Prints 'N passed, M failed'.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import yaml

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("RT_TEST_SOURCE_DIR", HERE.parent.parent))
BIN = pathlib.Path(os.environ.get("RT_TEST_BIN_DIR", SOURCE / "build" / "bin"))
DEPLOY = SOURCE / "deploy"

passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRIG_")}
    env.update(extra or {})
    return env


def run(argv, extra_env=None):
    return subprocess.run(argv, capture_output=True, text=True, env=clean_env(extra_env), timeout=60)


# ---- what the code knows ----

keys_out = run([str(BIN / "retrig"), "config", "--keys"])
if keys_out.returncode != 0:
    print("cannot list the configuration keys:", keys_out.stderr)
    sys.exit(1)
KEYS = {}
for line in keys_out.stdout.splitlines():
    name, env, default, _ = line.split("\t", 3)
    KEYS[name] = default
ENV_VARS = {"RETRIG_" + k.upper() for k in KEYS} | {"RETRIG_CONFIG"}
HELP_CACHE = {}


def help_text(argv):
    key = tuple(argv)
    if key not in HELP_CACHE:
        out = run(argv + ["--help"])
        HELP_CACHE[key] = out.stdout + out.stderr if out.returncode == 0 else None
    return HELP_CACHE[key]


def check_command(argv, where):
    """argv: a command line as a manifest gives it (binary path or name, then arguments)."""
    binary = pathlib.Path(argv[0]).name
    path = BIN / binary
    check(path.is_file() and os.access(path, os.X_OK), f"{where}: binary {binary} is built ({path})")
    if not path.is_file():
        return
    texts = [help_text([str(path)])]
    args = list(argv[1:])
    if binary == "retrig":  # global options, then a command and its own options
        i = 0
        while i < len(args) and args[i].startswith("-"):
            i += 2 if args[i] in ("--config", "-c") else 1
        if i < len(args):
            command = args[i]
            check(texts[0] is not None and re.search(rf"^\s+{re.escape(command)}\b", texts[0], re.M),
                  f"{where}: 'retrig {command}' is a command of retrig --help")
            texts.append(help_text([str(path), command]))
    check(all(t is not None for t in texts), f"{where}: {binary} --help works")
    for arg in args:
        if arg.startswith("--"):
            flag = arg.split("=", 1)[0]
            check(any(t and re.search(rf"(^|[\s\[]){re.escape(flag)}\b", t) for t in texts),
                  f"{where}: flag {flag} appears in {binary} --help")


def check_env(name, where):
    if name.startswith("RETRIG_"):
        check(name in ENV_VARS, f"{where}: environment variable {name} is a configuration key")


# ---- systemd ----

def parse_unit(path):
    """[Section] and Key=Value lines; keys may repeat (systemd allows it)."""
    sections, current = {}, None
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        check(current is not None and "=" in line, f"{path.name}:{n}: 'Key=Value' inside a section")
        if current is not None and "=" in line:
            key, value = line.split("=", 1)
            current.append((key.strip(), value.strip()))
    return sections


units = sorted((DEPLOY / "systemd").glob("*.service")) + sorted((DEPLOY / "systemd").glob("*.timer"))
check(len(units) >= 6, "deploy/systemd has the worker templates, perf (service+timer) and migrate")
for worker in ("classify", "retrigger", "decide", "history"):
    check((DEPLOY / "systemd" / f"retrig-{worker}@.service").is_file(), f"a systemd template for retrig-{worker}")
for unit in ("retrig-github.service", "retrig-github.timer"):
    check((DEPLOY / "systemd" / unit).is_file(), f"deploy/systemd/{unit} (collect-github and flaky-issues every hour)")
github_exec = [v for k, v in parse_unit(DEPLOY / "systemd" / "retrig-github.service").get("Service", []) if k == "ExecStart"]
check([e.split()[3] for e in github_exec] == ["collect-github", "flaky-issues"],
      "retrig-github.service runs collect-github, then flaky-issues")
for unit in units:
    sections = parse_unit(unit)
    check("Unit" in sections, f"{unit.name}: has [Unit]")
    if unit.suffix != ".service":
        continue
    service = dict(sections.get("Service", []))
    for key, want in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("PrivateTmp", "yes")):
        check(service.get(key) == want, f"{unit.name}: {key}={want}")
    for key, value in sections.get("Service", []):
        if key == "ExecStart":
            check_command(value.split(), unit.name)
        if key == "Environment":
            name = value.split("=", 1)[0]
            check_env(name, unit.name)
        if key == "EnvironmentFile":
            check(value.lstrip("-").startswith("/etc/retrig/"), f"{unit.name}: environment file under /etc/retrig")

example = DEPLOY / "systemd" / "retrig.env.example"
example_env = {}
for n, raw in enumerate(example.read_text().splitlines(), 1):
    line = raw.strip()
    if not line or line.startswith("#"):
        continue
    name, _, value = line.partition("=")
    check(_ == "=", f"retrig.env.example:{n}: NAME=value")
    check_env(name, f"retrig.env.example:{n}")
    example_env[name] = value
out = run([str(BIN / "retrig"), "config"], example_env)
check(out.returncode == 0, f"retrig.env.example: its values load ({out.stderr.strip()[:300]})")
check("CHANGE-ME" not in out.stdout, "retrig.env.example: passwords are masked by retrig config")

# ---- Kubernetes ----

docs = []
for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
    try:
        loaded = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError as e:
        check(False, f"{path.name} parses as YAML: {e}")
        continue
    check(bool(loaded), f"{path.name} parses as YAML and is not empty")
    for d in loaded:
        check(isinstance(d, dict) and d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name"),
              f"{path.name}: every document has apiVersion, kind and metadata.name")
        docs.append((path.name, d))

by_kind = {}
for name, d in docs:
    by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
deployments = by_kind.get("Deployment", {})
for worker in ("classify", "retrigger", "decide", "history"):
    check(f"retrig-{worker}" in deployments, f"a Deployment for retrig-{worker}")
secret_keys = set(by_kind.get("Secret", {}).get("retrig-secrets", {}).get("stringData", {}))
check(bool(secret_keys), "the Secret retrig-secrets has stringData")
configmap = by_kind.get("ConfigMap", {}).get("retrig-config", {})
conf_text = configmap.get("data", {}).get("retrig.conf", "")
check(bool(conf_text), "the ConfigMap retrig-config holds retrig.conf")
conf = {}
for line in conf_text.splitlines():
    line = line.strip()
    if line and not line.startswith("#"):
        key, _, value = line.partition("=")
        conf[key.strip()] = value.strip()
        check(key.strip() in KEYS, f"ConfigMap retrig.conf: key {key.strip()} exists")
with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
    f.write(conf_text)
    f.flush()
    out = run([str(BIN / "retrig"), "--config", f.name, "config"])
    check(out.returncode == 0, f"ConfigMap retrig.conf loads ({out.stderr.strip()[:300]})")


# Postgres is verified, not only encrypted: every example URL asks for verify-full, and a
# root certificate named under the secrets mount is mounted in every pod that connects.
db_url = by_kind.get("Secret", {}).get("retrig-secrets", {}).get("stringData", {}).get("database-url", "")
check("sslmode=verify-full" in db_url, f"the Secret's database-url verifies the server: {db_url}")
rootcert = re.search(r"sslrootcert=/run/secrets/retrig/([^&]+)", db_url)
check(rootcert is not None and rootcert.group(1) in secret_keys,
      "the Secret's database-url names a root certificate the Secret holds")
for path in (DEPLOY / "systemd" / "retrig.env.example", DEPLOY.parent / "README.md",
             *sorted((DEPLOY.parent / "docs").glob("*.md"))):
    for url in re.findall(r"postgresql://\S+", path.read_text()):
        if "@127.0.0.1" in url or "retrig:retrig@" in url:
            continue  # the local services
        check("sslmode=verify-full" in url, f"{path.name}: {url} verifies the server")


def pod_specs(d):
    spec = d.get("spec", {})
    if d["kind"] == "CronJob":
        spec = spec.get("jobTemplate", {}).get("spec", {})
    return spec.get("template", {}).get("spec", {})


for name, d in docs:
    if d["kind"] not in ("Deployment", "Job", "CronJob"):
        continue
    where = f"{name} {d['kind']}/{d['metadata']['name']}"
    pod = pod_specs(d)
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for v in volumes.values():
        if "secret" in v:
            check(v["secret"].get("secretName") == "retrig-secrets", f"{where}: volume {v['name']} uses retrig-secrets")
            for item in v["secret"].get("items", []):
                check(item["key"] in secret_keys, f"{where}: Secret key {item['key']} exists")
        if "configMap" in v:
            check(v["configMap"].get("name") in by_kind.get("ConfigMap", {}), f"{where}: ConfigMap {v['configMap'].get('name')} exists")
    mounted = {item["key"] for v in volumes.values() if "secret" in v
               for item in v["secret"].get("items", [])}
    for c in pod.get("initContainers", []) + pod.get("containers", []):
        if rootcert and any(e.get("valueFrom", {}).get("secretKeyRef", {}).get("key") == "database-url"
                            for e in c.get("env", [])):
            check(rootcert.group(1) in mounted, f"{where}: the Postgres root certificate is mounted")
        check_command(c.get("command", []), where)
        for mount in c.get("volumeMounts", []):
            check(mount["name"] in volumes, f"{where}: volume {mount['name']} is defined")
        for e in c.get("env", []):
            check_env(e["name"], where)
            ref = e.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                check(ref.get("name") == "retrig-secrets" and ref.get("key") in secret_keys,
                      f"{where}: {e['name']} comes from an existing Secret key ({ref})")
        for probe in ("readinessProbe", "livenessProbe"):
            get = c.get(probe, {}).get("httpGet")
            if get:
                check(get.get("path") == "/healthz", f"{where}: {probe} asks /healthz")
        ports = [p.get("containerPort") for p in c.get("ports", [])]
        if ports:
            check(str(ports[0]) == conf.get("metrics_port"), f"{where}: the container port is metrics_port")
            check(conf.get("metrics_bind") in ("0.0.0.0", "::"), f"{where}: metrics_bind reaches the pod network")

cron = by_kind.get("CronJob", {}).get("retrig-perf")
check(cron is not None and pod_specs(cron)["containers"][0]["command"][:2] == ["retrig-perf", "--once"],
      "a CronJob runs retrig-perf --once")
github = by_kind.get("CronJob", {}).get("retrig-github")
github_commands = [c["command"] for c in pod_specs(github).get("initContainers", []) + pod_specs(github)["containers"]] if github else []
check([cmd[3] for cmd in github_commands] == ["collect-github", "flaky-issues"],
      "a CronJob runs retrig collect-github, then retrig flaky-issues")
check(any("--apply" in cmd for cmd in github_commands), "the CronJob's flaky-issues acts (--apply)")
job = by_kind.get("Job", {}).get("retrig-migrate")
check(job is not None and "migrate" in pod_specs(job)["containers"][0]["command"], "a Job runs retrig migrate")

scaled = by_kind.get("ScaledObject", {})
auths = by_kind.get("TriggerAuthentication", {})
namespace = conf.get("amqp_namespace", KEYS["amqp_namespace"])
for worker, queue_pattern in (("classify", r"^queue/[^/]+/" + re.escape(conf.get("pulse_queue_name", KEYS["pulse_queue_name"])) + "$"),
                              ("decide", "^" + re.escape(namespace + ".decide") + "$")):
    so = scaled.get(f"retrig-{worker}")
    check(so is not None, f"a KEDA ScaledObject for retrig-{worker}")
    if not so:
        continue
    check(so["spec"]["scaleTargetRef"]["name"] in deployments, f"ScaledObject retrig-{worker} targets a Deployment")
    for t in so["spec"]["triggers"]:
        check(t["type"] == "rabbitmq", f"ScaledObject retrig-{worker}: a rabbitmq trigger")
        check(re.match(queue_pattern, t["metadata"]["queueName"]) is not None,
              f"ScaledObject retrig-{worker}: queue {t['metadata']['queueName']} is the one the worker consumes")
        auth = auths.get(t.get("authenticationRef", {}).get("name"))
        check(auth is not None, f"ScaledObject retrig-{worker}: its TriggerAuthentication exists")
        for ref in (auth or {}).get("spec", {}).get("secretTargetRef", []):
            check(ref["key"] in secret_keys, f"TriggerAuthentication: Secret key {ref['key']} exists")

# ---- RabbitMQ ----

try:
    defs = json.loads((DEPLOY / "rabbitmq" / "definitions.json").read_text())
except ValueError as e:
    defs = {"exchanges": [], "queues": [], "bindings": []}
    check(False, f"definitions.json parses as JSON: {e}")
exchanges = {e["name"]: e for e in defs["exchanges"]}
queues = {q["name"]: q for q in defs["queues"]}
bindings = {(b["source"], b["destination"], b["routing_key"]) for b in defs["bindings"]}
ns = KEYS["amqp_namespace"]
for name in (ns, ns + ".dlx", ns + ".decisions"):
    check(exchanges.get(name, {}).get("type") == "topic" and exchanges[name].get("durable"),
          f"definitions: durable topic exchange {name}")
check(queues.get(ns + ".dead-letter", {}).get("arguments") == {"x-queue-type": "quorum"}
      and (ns + ".dlx", ns + ".dead-letter", "#") in bindings,
      "definitions: the dead-letter queue (quorum), bound to the dead-letter exchange with #")


def delays(key):
    return sorted({int(x) for x in KEYS[key].split(",")})


work = {"retrigger": delays("retry_delays_ms"), "classify-retry": delays("retry_delays_ms"),
        "history-retry": delays("retry_delays_ms"), "decide": delays("decide_delays_ms")}
for key, wanted in work.items():
    name = f"{ns}.{key}"
    q = queues.get(name)
    check(q is not None and q["durable"] and not q["auto_delete"], f"definitions: durable work queue {name}")
    check(q is not None and q["arguments"] == {"x-dead-letter-exchange": ns + ".dlx",
                                               "x-queue-type": "quorum"},
          f"definitions: {name} has exactly the code's arguments (quorum: amqp_quorum_queues)")
    check((ns, name, key) in bindings, f"definitions: {name} bound to {ns} with {key}")
    have = sorted(int(n.rsplit(".", 1)[1]) for n in queues if n.startswith(name + ".delay."))
    check(have == wanted, f"definitions: delay queues of {name} {have} == the default delays {wanted}")
    for d in have:
        args = queues[f"{name}.delay.{d}"]["arguments"]
        check(args == {"x-message-ttl": d, "x-dead-letter-exchange": ns, "x-dead-letter-routing-key": key,
                       "x-queue-type": "quorum", "x-dead-letter-strategy": "at-least-once",
                       "x-overflow": "reject-publish"},
              f"definitions: {name}.delay.{d} has exactly the code's arguments (quorum)")
declared = set(queues) | set(exchanges)
code = (SOURCE / "common" / "io" / "amqp.c").read_text()
for arg in ("x-message-ttl", "x-dead-letter-exchange", "x-dead-letter-routing-key"):
    check(f'"{arg}"' in code, f"common/io/amqp.c declares {arg} (the definitions rely on it)")
check('"x-queue-type"' in code and '"quorum"' in code,
      "common/io/amqp.c declares quorum work queues (the definitions rely on it)")
for arg in ("x-dead-letter-strategy", "x-overflow"):
    check(f'"{arg}"' in code, f"common/io/amqp.c declares {arg} on quorum delay queues")

apply_sh = DEPLOY / "rabbitmq" / "apply.sh"
check(apply_sh.is_file() and os.access(apply_sh, os.X_OK), "deploy/rabbitmq/apply.sh is executable")
check(subprocess.run(["bash", "-n", str(apply_sh)]).returncode == 0, "apply.sh is valid bash")

roles = (DEPLOY / "postgres" / "roles.sql").read_text()
check("retrig_writer" in roles and "retrig_sheriff" in roles, "roles.sql defines the writer and the sheriff reader")

# history.conf: every setting is one this Postgres knows, and its malloc tunables are the ones
# scripts/bench --history-scale measured with
history_conf = (DEPLOY / "postgres" / "history.conf").read_text()
settings = re.findall(r"(?m)^([a-z_]+)\s*=", history_conf)
check({"shared_buffers", "huge_pages"} <= set(settings), "history.conf sets shared_buffers and huge_pages")
pg_bin = os.environ.get("RT_PG_BIN", "/usr/lib/postgresql/15/bin")
described = subprocess.run([os.path.join(pg_bin, "postgres"), "--describe-config"],
                           capture_output=True, text=True)
known = {line.split("\t", 1)[0] for line in described.stdout.splitlines()}
for name in settings:
    check(name in known, f"history.conf: {name} is a setting of {pg_bin}/postgres")
tunables = re.findall(r"GLIBC_TUNABLES=(\S+)", history_conf)
bench_tunables = re.findall(r'tunables="([^"]+)"', (SOURCE / "scripts" / "bench").read_text())
check(len(tunables) == 1 and tunables == bench_tunables,
      "history.conf's GLIBC_TUNABLES are the ones scripts/bench --history-scale runs with")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
