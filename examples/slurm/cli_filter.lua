-- cli_filter.lua: srun, sbatch and salloc --vram=SIZE ask Slurm for the
-- memory too (--gres=vram:SIZE), so that Slurm packs jobs by the GPU
-- memory they asked and never lets in more than a GPU holds; a job that
-- named the vram GRES itself is left as it asked. For vram's SPANK plugin
-- (docs/slurm.md). Put it beside slurm.conf on every machine users submit
-- from, with CliFilterPlugins=cli_filter/lua in slurm.conf; a site that
-- already has a cli_filter.lua adds this slurm_cli_pre_submit's body to
-- its own.

function slurm_cli_setup_defaults(options, early_pass)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, pack_offset)
	local spank = options["spank"]
	local size = spank and spank["vram"] and spank["vram"]["vram"]
	if size == nil then
		return slurm.SUCCESS
	end
	local gres = options["gres"]
	if gres == nil or gres == "" then
		options["gres"] = "vram:" .. size
	elseif not string.find("," .. gres, ",vram:") and not string.find("," .. gres, ",gres[:/]vram:") then
		options["gres"] = gres .. ",vram:" .. size
	end
	return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, job_id, step_id)
	return slurm.SUCCESS
end
