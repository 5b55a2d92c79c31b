// SPDX-License-Identifier: GPL-3.0-or-later
//
// The Flamenco job type compiled with recording stand-ins for the globals Flamenco Manager gives
// job compiler scripts (author, path, print): which tasks, which commands, which dependencies.
// Run by tests/farm/test_flamenco.py (node --test).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { posix } from "node:path";
import { test } from "node:test";
import vm from "node:vm";

const SCRIPT = new URL("../../farm/flamenco/limb_ik.js", import.meta.url);

// Flamenco's `author` module: tasks record their commands and dependencies.
function recordingAuthor() {
    return {
        Task(name, type) {
            return {
                name, type, commands: [], dependencies: [],
                addCommand(command) { this.commands.push(command); },
                addDependency(task) { this.dependencies.push(task); },
            };
        },
        Command(name, parameters) {
            return { name, parameters };
        },
    };
}

// The script in a fresh context, as the Manager loads it: its JOB_TYPE and compileJob.
function load() {
    const context = vm.createContext({
        author: recordingAuthor(),
        path: { join: posix.join, basename: posix.basename, dirname: posix.dirname },
        print: () => {},
    });
    vm.runInContext(readFileSync(SCRIPT, "utf8"), context, { filename: "limb_ik.js" });
    return vm.runInContext("({ JOB_TYPE, compileJob })", context);
}

function compile(settings) {
    const { compileJob } = load();
    const job = { name: "job", jobID: "1234-abcd", settings: { ...settings }, tasks: [] };
    job.addTask = (task) => job.tasks.push(task);
    compileJob(job);
    return job.tasks;
}

// The command line a worker runs for a blender-render command: {exe} {exeArgs} {argsBefore} {blendfile} {args}.
function commandLine(task) {
    assert.equal(task.commands.length, 1);
    const { name, parameters: p } = task.commands[0];
    assert.equal(name, "blender-render");
    return [p.exe, p.exeArgs, ...p.argsBefore, p.blendfile, ...p.args];
}

const TWO = { command: "bake", files: "/shots/sh010.blend\n/shots/sq2/sh020.blend", output_dir: "/shots/baked" };
const REPORTS = "/shots/baked/limb_ik_reports/1234-abcd";

test("two files compile into two tasks and a merge that waits for both", () => {
    const tasks = compile({ ...TWO, frames: "1:250" });
    assert.deepEqual(tasks.map((t) => [t.name, t.type]), [
        ["bake sh010.blend", "blender"], ["bake sh020.blend", "blender"], ["merge reports", "blender"],
    ]);
    assert.deepEqual(commandLine(tasks[0]), [
        "{blender}", "{blenderArgs}", "--command", "limb_ik", "bake", "/shots/sh010.blend",
        "--output-dir", "/shots/baked", "--frames", "1:250", "--json", `${REPORTS}/_shots_sh010.blend.json`,
    ]);
    assert.deepEqual(commandLine(tasks[1]), [
        "{blender}", "{blenderArgs}", "--command", "limb_ik", "bake", "/shots/sq2/sh020.blend",
        "--output-dir", "/shots/baked", "--frames", "1:250", "--json", `${REPORTS}/_shots_sq2_sh020.blend.json`,
    ]);
    assert.deepEqual(commandLine(tasks[2]), [
        "{blender}", "{blenderArgs}", "--command", "limb_ik", "merge", REPORTS,
        "--json", "/shots/baked/limb_ik_report.json",
    ]);
    assert.deepEqual(tasks[2].dependencies, [tasks[0], tasks[1]]);
    assert.deepEqual(tasks[0].dependencies, []);
});

test("each command gets only the options it takes", () => {
    const options = { frames: "5:9", ground: "Terrain", addons: "bl_ext.user_default.limb_ik" };
    const lines = Object.fromEntries(["detect", "bake", "plant", "check"].map(
        (command) => [command, commandLine(compile({ ...TWO, ...options, command })[0])],
    ));
    const front = ["{blender}", "{blenderArgs}", "--addons", "bl_ext.user_default.limb_ik", "--command", "limb_ik"];
    const json = ["--json", `${REPORTS}/_shots_sh010.blend.json`];
    const out = ["--output-dir", "/shots/baked"];
    assert.deepEqual(lines.detect, [...front, "detect", "/shots/sh010.blend", ...out, ...json]);
    assert.deepEqual(lines.bake, [...front, "bake", "/shots/sh010.blend", ...out, "--frames", "5:9", ...json]);
    assert.deepEqual(lines.plant, [...front, "plant", "/shots/sh010.blend", ...out, "--frames", "5:9",
                                   "--ground", "Terrain", ...json]);
    assert.deepEqual(lines.check, [...front, "check", "/shots/sh010.blend", "--frames", "5:9", ...json]);
});

test("files are split on new lines and ';', blanks dropped, each named once", () => {
    const tasks = compile({ ...TWO, files: " /a/one.blend ;\n\n/b/two.blend;/a/one.blend\n" });
    assert.deepEqual(tasks.map((t) => t.commands[0].parameters.blendfile), ["/a/one.blend", "/b/two.blend", REPORTS]);
});

test("a job that cannot work is refused when it is submitted", () => {
    assert.throws(() => compile({ ...TWO, files: " \n; " }), /no \.blend files given/);
    assert.throws(() => compile({ ...TWO, frames: "1-250" }), /"1-250" is not a frame range like 1:250/);
    assert.throws(() => compile({ ...TWO, command: "render" }), /unknown command "render"/);
    assert.throws(() => compile({ ...TWO, files: "/a/sh010.blend\n/b/sh010.blend" }),
                  /"\/b\/sh010\.blend" and "\/a\/sh010\.blend" would both be written as "sh010\.blend"/);
    // check writes no .blend file, so files of the same name are fine there.
    assert.equal(compile({ ...TWO, command: "check", files: "/a/sh010.blend\n/b/sh010.blend" }).length, 3);
});

test("the job type offers the four commands and requires files and an output folder", () => {
    const { JOB_TYPE } = load();
    const settings = Object.fromEntries(JOB_TYPE.settings.map((s) => [s.key, s]));
    // Arrays made inside the script's context have its own Array prototype: spread them before comparing.
    assert.deepEqual(Object.keys(settings), ["command", "files", "output_dir", "frames", "ground", "addons"]);
    assert.deepEqual([...settings.command.choices], ["detect", "bake", "plant", "check"]);
    assert.ok(settings.files.required && settings.output_dir.required && settings.command.required);
    assert.equal(settings.output_dir.subtype, "dir_path");
    for (const setting of JOB_TYPE.settings) {
        assert.ok(setting.description, `${setting.key} has no description`);
    }
});
