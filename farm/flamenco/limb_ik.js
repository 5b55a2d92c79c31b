// SPDX-License-Identifier: GPL-3.0-or-later
//
// Limb IK's batch command line as a Flamenco 3 job type: one task per .blend file, each running
// `blender --command limb_ik COMMAND FILE ...` with its own JSON report, then one task that merges
// the reports into OUTPUT/limb_ik_report.json.
//
// Install: copy this file into the `scripts` folder next to the flamenco-manager executable and
// restart the Manager. The workers' Blender must have Limb IK enabled (or set "Enable module").

const COMMANDS = ["detect", "bake", "plant", "check"];

const JOB_TYPE = {
    label: "Limb IK Batch",
    description: "Detect, bake, plant or check many .blend files with Limb IK, one task per file.",
    settings: [
        { key: "command", type: "string", required: true, choices: COMMANDS, default: "bake",
          description: "detect: add limbs by bone name; bake: key the IK pose; plant: plant the feet and bake; " +
                       "check: list limbs that cannot be solved (writes no .blend)" },
        { key: "files", type: "string", required: true,
          description: "The .blend files, separated by new lines or ';'. One task each" },
        { key: "output_dir", type: "string", subtype: "dir_path", required: true,
          description: "Results keep their input's name here; the merged report is limb_ik_report.json" },
        { key: "frames", type: "string", default: "",
          description: "Frame range A:B for bake, plant and check (empty: each scene's own)" },
        { key: "ground", type: "string", default: "",
          description: "plant: the collection to stand on (empty: each rig's own ground)" },
        { key: "addons", type: "string", default: "", visible: "submission",
          description: "Add-on module to enable first, e.g. bl_ext.user_default.limb_ik " +
                       "(empty: the workers' preferences enable Limb IK)" },
    ],
};

function compileJob(job) {
    const settings = job.settings;
    const command = settings.command;
    if (!COMMANDS.includes(command)) {
        throw `Limb IK: unknown command "${command}"; choose one of ${COMMANDS.join(", ")}.`;
    }
    const files = inputFiles(settings.files);
    const frames = (settings.frames || "").trim();
    if (frames && !/^-?\d+:-?\d+$/.test(frames)) {
        throw `Limb IK: "${frames}" is not a frame range like 1:250.`;
    }
    if (command !== "check") {
        refuseSharedOutputs(files);
    }
    // This job's own folder of reports, so the merge never picks up an earlier job's.
    const reportDir = path.join(settings.output_dir, "limb_ik_reports", job.jobID);
    const before = settings.addons ? ["--addons", settings.addons] : [];
    const options = [];
    if (command !== "check") options.push("--output-dir", settings.output_dir);
    if (frames && command !== "detect") options.push("--frames", frames);
    if (settings.ground && command === "plant") options.push("--ground", settings.ground);

    const fileTasks = files.map((file) => {
        const task = author.Task(`${command} ${path.basename(file)}`, "blender");
        task.addCommand(blender([...before, "--command", "limb_ik", command], file,
                                [...options, "--json", path.join(reportDir, reportName(file))]));
        job.addTask(task);
        return task;
    });
    const merge = author.Task("merge reports", "blender");
    merge.addCommand(blender([...before, "--command", "limb_ik", "merge"], reportDir,
                             ["--json", path.join(settings.output_dir, "limb_ik_report.json")]));
    for (const task of fileTasks) {
        merge.addDependency(task);
    }
    job.addTask(merge);
}

// Flamenco's Blender command runs `{exe} {exeArgs} {argsBefore} {blendfile} {args}`. With
// `--command` in argsBefore the "blend file" is the command line's first argument, not a file
// that Blender opens: Limb IK opens it.
function blender(argsBefore, blendfile, args) {
    return author.Command("blender-render", {
        exe: "{blender}",
        exeArgs: "{blenderArgs}",
        argsBefore: argsBefore,
        blendfile: blendfile,
        args: args,
    });
}

function inputFiles(text) {
    const files = (text || "").split(/[\n;]/).map((file) => file.trim()).filter((file) => file !== "");
    if (files.length === 0) {
        throw "Limb IK: no .blend files given.";
    }
    return [...new Set(files)]; // a file named twice is done once
}

// Every task writes OUTPUT/<input's name>: two inputs of the same name would overwrite each other.
function refuseSharedOutputs(files) {
    const seen = new Map();
    for (const file of files) {
        const name = path.basename(file);
        if (seen.has(name)) {
            throw `Limb IK: "${file}" and "${seen.get(name)}" would both be written as "${name}"; ` +
                  "submit them in separate jobs.";
        }
        seen.set(name, file);
    }
}

// Named after the whole input path, so that files of the same name keep a report each.
function reportName(file) {
    return file.replace(/[^A-Za-z0-9._-]+/g, "_").slice(-150) + ".json";
}
