/* sinew-viewer: the demo's scene in a window. One copy of the character per backend, side by
 * side; space plays and pauses, keys 1..9 select a character, b cycles the selected
 * character's backend (sinew_skin_set_backend, so a physics backend starts from the current
 * shape). The headless renderer draws each frame and the image is blitted to a GLFW window's
 * swapchain. SPDX-License-Identifier: MIT */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <sinew/sinew.h>
#include <sinew/sinew_import.h>
#include <sinew/sinew_render.h>

#include "sample_character.h"
#include "sample_log.h"
#include "sample_options.h"

enum { MAX_CHARACTERS = 9, MAX_BACKENDS = 16, MAX_IMAGES = 8, BOUNDS_SECONDS = 10 };
static const float DT = 1.0f / 60.0f;
static const char* const DEFAULT_BACKENDS[] = {"lbs", "dqs", "ps", "fps"};

static void usage(FILE* out)
{
    fprintf(out,
        "usage: sinew-viewer [options]\n"
        "\n"
        "Shows one character per backend side by side in a window, animated.\n"
        "Keys: space play/pause, 1..9 select a character, b cycle its backend, q or Esc quit.\n"
        "\n"
        "  --character PATH   as sinew-demo (default: the male test character, else\n"
        "                     BCN_Epileptic.X, else the procedural arm; `procedural`: the arm)\n"
        "  --backends LIST    the characters' starting backends (default: lbs,dqs,ps,fps where\n"
        "                     they can run); --backend NAME shows one character\n"
        "  --size WxH         window size (default 1280x480)\n"
        "  --frames N         quit after N frames (default: run until closed)\n"
        "  --keys TEXT        press one key of TEXT per frame from the second frame (tests)\n"
        "  --animation K      the character's animation (default 0)\n"
        "  --threads T        world threads; --set KEY=VALUE backend parameter (repeatable)\n"
        "  --validation       enable the Vulkan validation layer; any message fails the run\n"
        "  --help             print this and exit\n"
        "\n"
        "Exit codes: 0 done, 1 runtime error, 2 bad command line, 77 no display, no Vulkan\n"
        "surface or the character file is missing (failures under SINEW_REQUIRE_VULKAN=1 and\n"
        "SINEW_REQUIRE_DATA=1).\n");
}

typedef struct viewer {
    /* options */
    const char* character_path;
    const char* backend;
    char* backends_text;
    uint32_t width, height, max_frames, animation_index, threads;
    const char* keys;
    int validation;
    sample_params params;

    /* scene */
    sample_character character;
    sinew_world* world;
    sinew_rig rig;
    uint32_t available_count;
    const char* available[MAX_BACKENDS];    /* backends that can run here, for cycling */
    uint32_t count;                         /* characters */
    sinew_skin skins[MAX_CHARACTERS];
    float* positions[MAX_CHARACTERS];
    float* normals[MAX_CHARACTERS];
    uint32_t vertices, triangles, joints;
    const uint32_t* indices;
    float* pose;
    const sinew_animation* animation;
    int32_t joint;
    float up[3];
    float bounds[6];
    uint32_t selected;
    int paused;
    uint64_t sim_frame;

    /* window and Vulkan */
    GLFWwindow* window;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    uint64_t validation_messages;
    VkSurfaceKHR surface;
    VkPhysicalDevice physical;
    uint32_t family;
    VkDevice device;
    VkQueue queue;
    VkSwapchainKHR swapchain;
    VkFormat swap_format;
    VkExtent2D swap_extent;
    uint32_t image_count;
    VkImage images[MAX_IMAGES];
    VkSemaphore acquired;
    VkSemaphore presentable[MAX_IMAGES];
    VkCommandPool pool;
    VkCommandBuffer cmd;
    VkFence fence;
    int resized;
    sinew_vk_context* vk;
    sinew_renderer* renderer;
} viewer;

static int require_vulkan(void)
{
    const char* v = getenv("SINEW_REQUIRE_VULKAN");
    return v && strcmp(v, "1") == 0;
}

/* No display or no Vulkan surface: a skip for tests, unless Vulkan is required. */
static int skip_or_fail(const char* why)
{
    if (require_vulkan()) {
        fprintf(stderr, "sinew-viewer: %s (SINEW_REQUIRE_VULKAN=1)\n", why);
        return SAMPLE_EXIT_FAILURE;
    }
    fprintf(stderr, "sinew-viewer: skipped, %s\n", why);
    return SAMPLE_EXIT_SKIP;
}

static int vk_fail(const char* what, VkResult vr)
{
    fprintf(stderr, "sinew-viewer: %s failed: VkResult %d\n", what, (int)vr);
    return SAMPLE_EXIT_FAILURE;
}

static int fail(const char* what, sinew_result r)
{
    fprintf(stderr, "sinew-viewer: %s failed: %s\n", what, sinew_result_string(r));
    return SAMPLE_EXIT_FAILURE;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user)
{
    (void)types;
    viewer* v = user;
    if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
        v->validation_messages++;
        fprintf(stderr, "sinew-viewer: vulkan validation: %s\n",
                data && data->pMessage ? data->pMessage : "(no message)");
    }
    return VK_FALSE;
}

/* ---------------------------------------------------------------------------------------- */
/* Scene                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static int path_exists(const char* path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static sinew_result load_character(viewer* v)
{
    const char* path = v->character_path;
    char buf[4096];
    if (!path) {
        snprintf(buf, sizeof buf, "%s/characters/male/male.ini", sinew_import_data_dir());
        if (!path_exists(buf)) {
            const char* models = getenv("SINEW_ASSIMP_MODELS_DIR");
            snprintf(buf, sizeof buf, "%s/X/BCN_Epileptic.X",
                     models && *models ? models : "/usr/share/assimp/models");
        }
        if (path_exists(buf)) path = buf;
    }
    if (!path || strcmp(path, "procedural") == 0)
        return sample_character_make_arm(48, 24, &v->character);
    return sample_character_load(path, NULL, &v->character);
}

static sinew_result frame_pose(viewer* v, uint64_t frame, sinew_pose_space* space)
{
    double seconds = (double)frame / 60.0;
    if (v->animation) {
        *space = SINEW_POSE_LOCAL;
        return sinew_animation_sample(v->animation, (float)seconds, 1, v->pose);
    }
    *space = SINEW_POSE_MODEL;
    return sample_motion_pose(&v->character, (uint32_t)v->joint, seconds, v->pose);
}

/* Steps every character (or only re-reads them when paused) and reads their outputs. */
static sinew_result step(viewer* v)
{
    if (!v->paused) {
        sinew_pose_space space;
        sinew_result r = frame_pose(v, v->sim_frame, &space);
        if (r != SINEW_OK) return r;
        sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
        pd.space = space;
        pd.joint_count = v->joints;
        pd.matrices = v->pose;
        for (uint32_t c = 0; c < v->count; c++)
            if ((r = sinew_skin_set_pose(v->world, v->skins[c], &pd)) != SINEW_OK) return r;
        if ((r = sinew_world_update(v->world, DT)) != SINEW_OK) return r;
        v->sim_frame++;
    }
    for (uint32_t c = 0; c < v->count; c++) {
        sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
        out.vertex_capacity = v->vertices;
        out.positions = v->positions[c];
        out.normals = v->normals[c];
        sinew_result r = sinew_skin_read_output(v->world, v->skins[c], &out);
        if (r != SINEW_OK) return r;
    }
    return SINEW_OK;
}

/* A still camera: the box of the lbs pose over the first seconds of the motion, plus a
 * margin for secondary motion. */
static sinew_result scene_bounds(viewer* v)
{
    sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
    sd.rig = v->rig;
    sd.backend = "lbs";
    sinew_skin skin;
    sinew_result r = sinew_world_add_skin(v->world, &sd, &skin);
    if (r != SINEW_OK) return r;
    float* b = v->bounds;
    for (int k = 0; k < 3; k++) {
        b[k] = INFINITY;
        b[k + 3] = -INFINITY;
    }
    uint32_t frames = 60 * BOUNDS_SECONDS;
    if (v->animation && v->animation->duration > 0.0f &&
        v->animation->duration * 60.0f + 1.0f < (float)frames)
        frames = (uint32_t)(v->animation->duration * 60.0f) + 1u;
    for (uint32_t f = 0; f < frames && r == SINEW_OK; f += 2) {
        sinew_pose_space space;
        r = frame_pose(v, f, &space);
        sinew_pose_desc pd = SINEW_POSE_DESC_INIT;
        pd.space = space;
        pd.joint_count = v->joints;
        pd.matrices = v->pose;
        if (r == SINEW_OK) r = sinew_skin_set_pose(v->world, skin, &pd);
        if (r == SINEW_OK) r = sinew_skin_update(v->world, skin, DT);
        sinew_output_desc out = SINEW_OUTPUT_DESC_INIT;
        out.vertex_capacity = v->vertices;
        out.positions = v->positions[0];
        if (r == SINEW_OK) r = sinew_skin_read_output(v->world, skin, &out);
        for (uint32_t i = 0; r == SINEW_OK && i < v->vertices; i++)
            for (int k = 0; k < 3; k++) {
                b[k] = fminf(b[k], v->positions[0][3 * i + k]);
                b[k + 3] = fmaxf(b[k + 3], v->positions[0][3 * i + k]);
            }
    }
    sinew_world_remove_skin(v->world, skin);
    float e[3];
    for (int k = 0; k < 3; k++) {
        e[k] = b[k + 3] - b[k];
        b[k] -= 0.05f * e[k];
        b[k + 3] += 0.05f * e[k];
    }
    /* Up is the longest side when that is y or z (a standing character), else y. */
    v->up[0] = v->up[1] = v->up[2] = 0.0f;
    if (e[2] > e[1] && e[2] > e[0]) v->up[2] = 1.0f;
    else v->up[1] = 1.0f;
    return r;
}

static int setup_scene(viewer* v)
{
    sinew_world_desc wd = SINEW_WORLD_DESC_INIT;
    wd.logger = sample_stderr_logger();
    wd.thread_count = v->threads;
    sinew_result r = sinew_world_create(&wd, &v->world);
    if (r != SINEW_OK) return fail("sinew_world_create", r);
    for (uint32_t i = 0; i < sinew_world_backend_count(v->world) && v->available_count <
                         MAX_BACKENDS; i++) {
        const char* name = sinew_world_backend_name(v->world, i);
        if (name && sinew_world_probe_backend(v->world, name) == SINEW_OK)
            v->available[v->available_count++] = name;
    }
    const char* starting[MAX_CHARACTERS];
    if (v->backends_text || v->backend) {
        if (!v->backends_text) starting[v->count++] = v->backend;
        for (char* n = v->backends_text ? strtok(v->backends_text, ",") : NULL; n;
             n = strtok(NULL, ",")) {
            if (v->count == MAX_CHARACTERS) {
                fprintf(stderr, "sinew-viewer: at most %d characters\n", MAX_CHARACTERS);
                return SAMPLE_EXIT_USAGE;
            }
            starting[v->count++] = n;
        }
    } else {
        for (size_t i = 0; i < sizeof DEFAULT_BACKENDS / sizeof *DEFAULT_BACKENDS; i++)
            if (sinew_world_probe_backend(v->world, DEFAULT_BACKENDS[i]) == SINEW_OK)
                starting[v->count++] = DEFAULT_BACKENDS[i];
    }
    if (v->count == 0) {
        fprintf(stderr, "sinew-viewer: no backend\n");
        return SAMPLE_EXIT_USAGE;
    }

    r = load_character(v);
    if (r == SINEW_ERROR_FILE_NOT_FOUND && !sample_require_data()) {
        fprintf(stderr, "sinew-viewer: skipped, %s is missing\n", v->character_path);
        return SAMPLE_EXIT_SKIP;
    }
    if (r != SINEW_OK) return fail("loading the character", r);
    if ((r = sinew_rig_create(v->world, &v->character.rig, &v->rig)) != SINEW_OK)
        return fail("sinew_rig_create", r);
    sinew_rig_info info = SINEW_RIG_INFO_INIT;
    sinew_rig_get_info(v->world, v->rig, &info);
    v->vertices = info.vertex_count;
    v->triangles = info.triangle_count;
    v->joints = info.joint_count;
    sinew_rig_get_mesh(v->world, v->rig, NULL, NULL, &v->indices);
    v->joint = sample_default_joint(&v->character);
    if (v->character.animation_count > 0) {
        if (v->animation_index >= v->character.animation_count) {
            fprintf(stderr, "sinew-viewer: --animation %u: %s has %u\n", v->animation_index,
                    v->character.source, v->character.animation_count);
            return SAMPLE_EXIT_USAGE;
        }
        v->animation = &v->character.animations[v->animation_index];
    } else if (v->joint < 0) {
        fprintf(stderr, "sinew-viewer: %s has no animation and no joint to move\n",
                v->character.source);
        return SAMPLE_EXIT_FAILURE;
    }
    v->pose = malloc(sizeof(float) * 16 * v->joints);
    if (!v->pose) return fail("allocating", SINEW_ERROR_OUT_OF_MEMORY);
    for (uint32_t c = 0; c < v->count; c++) {
        v->positions[c] = malloc(sizeof(float) * 3 * v->vertices);
        v->normals[c] = malloc(sizeof(float) * 3 * v->vertices);
        if (!v->positions[c] || !v->normals[c])
            return fail("allocating", SINEW_ERROR_OUT_OF_MEMORY);
    }
    if ((r = scene_bounds(v)) != SINEW_OK) return fail("fitting the camera", r);
    for (uint32_t c = 0; c < v->count; c++) {
        sinew_skin_desc sd = SINEW_SKIN_DESC_INIT;
        sd.rig = v->rig;
        sd.backend = starting[c];
        sd.params = v->params.params;
        sd.param_count = v->params.count;
        if ((r = sinew_world_add_skin(v->world, &sd, &v->skins[c])) != SINEW_OK) {
            fprintf(stderr, "sinew-viewer: backend %s: %s\n", starting[c],
                    sinew_result_string(r));
            return SAMPLE_EXIT_FAILURE;
        }
    }
    return SAMPLE_EXIT_OK;
}

static void update_title(viewer* v)
{
    char title[512];
    int n = snprintf(title, sizeof title, "sinew-viewer%s:", v->paused ? " (paused)" : "");
    for (uint32_t c = 0; c < v->count && n > 0 && (size_t)n < sizeof title; c++)
        n += snprintf(title + n, sizeof title - (size_t)n, c == v->selected ? "  [%u %s]"
                                                                             : "  %u %s",
                      c + 1, sinew_skin_backend(v->world, v->skins[c]));
    glfwSetWindowTitle(v->window, title);
}

/* Cycles the selected character to the next backend that accepts it. */
static void cycle_backend(viewer* v)
{
    sinew_skin skin = v->skins[v->selected];
    const char* current = sinew_skin_backend(v->world, skin);
    uint32_t at = 0;
    for (uint32_t i = 0; i < v->available_count; i++)
        if (current && strcmp(v->available[i], current) == 0) at = i;
    for (uint32_t k = 1; k <= v->available_count; k++) {
        const char* next = v->available[(at + k) % v->available_count];
        if (sinew_skin_set_backend(v->world, skin, next, v->params.params, v->params.count) ==
            SINEW_OK) {
            printf("character %u: %s -> %s (prepared in the background)\n", v->selected + 1,
                   current ? current : "?", next);
            return;
        }
    }
}

static void on_key_char(viewer* v, int key)
{
    if (key == ' ') v->paused = !v->paused;
    else if (key >= '1' && key <= '9' && (uint32_t)(key - '1') < v->count)
        v->selected = (uint32_t)(key - '1');
    else if (key == 'b') cycle_backend(v);
    else if (key == 'q') glfwSetWindowShouldClose(v->window, GLFW_TRUE);
    else return;
    update_title(v);
}

static void glfw_key(GLFWwindow* window, int key, int scancode, int action, int mods)
{
    (void)scancode;
    (void)mods;
    viewer* v = glfwGetWindowUserPointer(window);
    if (action != GLFW_PRESS) return;
    if (key == GLFW_KEY_ESCAPE) glfwSetWindowShouldClose(window, GLFW_TRUE);
    else if (key == GLFW_KEY_SPACE) on_key_char(v, ' ');
    else if (key >= GLFW_KEY_1 && key <= GLFW_KEY_9) on_key_char(v, '1' + (key - GLFW_KEY_1));
    else if (key == GLFW_KEY_B) on_key_char(v, 'b');
    else if (key == GLFW_KEY_Q) on_key_char(v, 'q');
}

static void glfw_resized(GLFWwindow* window, int w, int h)
{
    (void)w;
    (void)h;
    viewer* v = glfwGetWindowUserPointer(window);
    v->resized = 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Vulkan: instance, device, swapchain                                                      */
/* ---------------------------------------------------------------------------------------- */

static int has_layer(const char* name)
{
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, NULL);
    VkLayerProperties* layers = calloc(count ? count : 1, sizeof *layers);
    if (!layers) return 0;
    vkEnumerateInstanceLayerProperties(&count, layers);
    int found = 0;
    for (uint32_t i = 0; i < count; i++) found |= strcmp(layers[i].layerName, name) == 0;
    free(layers);
    return found;
}

static int create_instance(viewer* v)
{
    uint32_t glfw_count = 0;
    const char** glfw_ext = glfwGetRequiredInstanceExtensions(&glfw_count);
    if (!glfw_ext) return skip_or_fail("GLFW finds no Vulkan surface extensions");
    const char* ext[16];
    uint32_t n = 0;
    for (uint32_t i = 0; i < glfw_count && n < 15; i++) ext[n++] = glfw_ext[i];
    const char* layer = "VK_LAYER_KHRONOS_validation";
    if (v->validation) {
        if (!has_layer(layer)) {
            fprintf(stderr, "sinew-viewer: --validation: %s is not installed\n", layer);
            return SAMPLE_EXIT_FAILURE;
        }
        ext[n++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    }
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "sinew-viewer";
    app.apiVersion = VK_API_VERSION_1_2;
    VkDebugUtilsMessengerCreateInfoEXT dm = {
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    dm.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    dm.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    dm.pfnUserCallback = on_validation;
    dm.pUserData = v;
    VkInstanceCreateInfo info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    info.enabledExtensionCount = n;
    info.ppEnabledExtensionNames = ext;
    if (v->validation) {
        info.pNext = &dm;
        info.enabledLayerCount = 1;
        info.ppEnabledLayerNames = &layer;
    }
    VkResult vr = vkCreateInstance(&info, NULL, &v->instance);
    if (vr == VK_ERROR_INCOMPATIBLE_DRIVER || vr == VK_ERROR_INITIALIZATION_FAILED ||
        vr == VK_ERROR_EXTENSION_NOT_PRESENT)
        return skip_or_fail("no Vulkan driver with surface support");
    if (vr != VK_SUCCESS) return vk_fail("vkCreateInstance", vr);
    if (v->validation) {
        PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
            vkGetInstanceProcAddr(v->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create || (vr = create(v->instance, &dm, NULL, &v->messenger)) != VK_SUCCESS)
            return vk_fail("vkCreateDebugUtilsMessengerEXT", vr);
    }
    vr = glfwCreateWindowSurface(v->instance, v->window, NULL, &v->surface);
    if (vr != VK_SUCCESS) return skip_or_fail("glfwCreateWindowSurface failed");
    return SAMPLE_EXIT_OK;
}

/* The first device with a queue family that has graphics and can present to the window. */
static int create_device(viewer* v)
{
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(v->instance, &count, NULL);
    VkPhysicalDevice devices[16];
    if (count > 16) count = 16;
    if (count) vkEnumeratePhysicalDevices(v->instance, &count, devices);
    for (uint32_t d = 0; d < count && !v->physical; d++) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(devices[d], &props);
        if (props.apiVersion < VK_API_VERSION_1_2) continue;
        uint32_t families = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(devices[d], &families, NULL);
        VkQueueFamilyProperties fp[32];
        if (families > 32) families = 32;
        vkGetPhysicalDeviceQueueFamilyProperties(devices[d], &families, fp);
        for (uint32_t f = 0; f < families; f++) {
            VkBool32 present = VK_FALSE;
            vkGetPhysicalDeviceSurfaceSupportKHR(devices[d], f, v->surface, &present);
            if (present && (fp[f].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
                (fp[f].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
                v->physical = devices[d];
                v->family = f;
                break;
            }
        }
    }
    if (!v->physical) return skip_or_fail("no Vulkan device can present to the window");
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueFamilyIndex = v->family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    /* sinew_vk_context_desc asks an engine's device for timeline semaphores. */
    VkPhysicalDeviceVulkan12Features have12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 have = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    have.pNext = &have12;
    vkGetPhysicalDeviceFeatures2(v->physical, &have);
    VkPhysicalDeviceVulkan12Features f12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.timelineSemaphore = have12.timelineSemaphore;
    const char* ext = VK_KHR_SWAPCHAIN_EXTENSION_NAME;
    VkDeviceCreateInfo info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = &f12;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &ext;
    VkResult vr = vkCreateDevice(v->physical, &info, NULL, &v->device);
    if (vr != VK_SUCCESS) return vk_fail("vkCreateDevice", vr);
    vkGetDeviceQueue(v->device, v->family, 0, &v->queue);

    VkCommandPoolCreateInfo pool = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = v->family;
    if ((vr = vkCreateCommandPool(v->device, &pool, NULL, &v->pool)) != VK_SUCCESS)
        return vk_fail("vkCreateCommandPool", vr);
    VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    alloc.commandPool = v->pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    if ((vr = vkAllocateCommandBuffers(v->device, &alloc, &v->cmd)) != VK_SUCCESS)
        return vk_fail("vkAllocateCommandBuffers", vr);
    VkFenceCreateInfo fence = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((vr = vkCreateFence(v->device, &fence, NULL, &v->fence)) != VK_SUCCESS)
        return vk_fail("vkCreateFence", vr);
    VkSemaphoreCreateInfo sem = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    if ((vr = vkCreateSemaphore(v->device, &sem, NULL, &v->acquired)) != VK_SUCCESS)
        return vk_fail("vkCreateSemaphore", vr);
    return SAMPLE_EXIT_OK;
}

static void destroy_swapchain(viewer* v)
{
    for (uint32_t i = 0; i < MAX_IMAGES; i++) {
        if (v->presentable[i]) vkDestroySemaphore(v->device, v->presentable[i], NULL);
        v->presentable[i] = VK_NULL_HANDLE;
    }
    if (v->swapchain) vkDestroySwapchainKHR(v->device, v->swapchain, NULL);
    v->swapchain = VK_NULL_HANDLE;
}

static int create_swapchain(viewer* v)
{
    VkSurfaceCapabilitiesKHR caps;
    VkResult vr = vkGetPhysicalDeviceSurfaceCapabilitiesKHR(v->physical, v->surface, &caps);
    if (vr != VK_SUCCESS) return vk_fail("vkGetPhysicalDeviceSurfaceCapabilitiesKHR", vr);
    if (!(caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_DST_BIT))
        return skip_or_fail("the surface cannot be a blit target");
    uint32_t count = 0;
    vkGetPhysicalDeviceSurfaceFormatsKHR(v->physical, v->surface, &count, NULL);
    VkSurfaceFormatKHR formats[64];
    if (count > 64) count = 64;
    vkGetPhysicalDeviceSurfaceFormatsKHR(v->physical, v->surface, &count, formats);
    if (count == 0) return skip_or_fail("the surface has no formats");
    /* The renderer's image is already gamma-encoded UNORM: prefer a UNORM target. */
    VkSurfaceFormatKHR chosen = formats[0];
    for (uint32_t i = 0; i < count; i++)
        if (formats[i].format == VK_FORMAT_B8G8R8A8_UNORM ||
            formats[i].format == VK_FORMAT_R8G8B8A8_UNORM) {
            chosen = formats[i];
            break;
        }
    VkExtent2D extent = caps.currentExtent;
    if (extent.width == UINT32_MAX) {
        int w = 0, h = 0;
        glfwGetFramebufferSize(v->window, &w, &h);
        extent.width = (uint32_t)w;
        extent.height = (uint32_t)h;
    }
    if (extent.width == 0 || extent.height == 0) return SAMPLE_EXIT_OK;   /* minimised */
    uint32_t images = caps.minImageCount + 1;
    if (caps.maxImageCount && images > caps.maxImageCount) images = caps.maxImageCount;
    if (images > MAX_IMAGES) images = MAX_IMAGES;
    VkSwapchainCreateInfoKHR info = {VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
    info.surface = v->surface;
    info.minImageCount = images;
    info.imageFormat = chosen.format;
    info.imageColorSpace = chosen.colorSpace;
    info.imageExtent = extent;
    info.imageArrayLayers = 1;
    info.imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
    info.preTransform = caps.currentTransform;
    info.compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
    if (!(caps.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR))
        info.compositeAlpha = VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR;
    info.presentMode = VK_PRESENT_MODE_FIFO_KHR;    /* always available */
    info.clipped = VK_TRUE;
    if ((vr = vkCreateSwapchainKHR(v->device, &info, NULL, &v->swapchain)) != VK_SUCCESS)
        return vk_fail("vkCreateSwapchainKHR", vr);
    v->swap_format = chosen.format;
    v->swap_extent = extent;
    v->image_count = 0;
    vkGetSwapchainImagesKHR(v->device, v->swapchain, &v->image_count, NULL);
    if (v->image_count > MAX_IMAGES) v->image_count = MAX_IMAGES;
    vkGetSwapchainImagesKHR(v->device, v->swapchain, &v->image_count, v->images);
    /* One "ready to present" semaphore per image: presentation may still hold the
     * previous one of another image. */
    VkSemaphoreCreateInfo sem = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    for (uint32_t i = 0; i < v->image_count; i++)
        if ((vr = vkCreateSemaphore(v->device, &sem, NULL, &v->presentable[i])) != VK_SUCCESS)
            return vk_fail("vkCreateSemaphore", vr);
    return SAMPLE_EXIT_OK;
}

static int recreate_swapchain(viewer* v)
{
    vkDeviceWaitIdle(v->device);
    destroy_swapchain(v);
    v->resized = 0;
    return create_swapchain(v);
}

static void image_barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from,
                          VkImageLayout to, VkAccessFlags src_access, VkAccessFlags dst_access,
                          VkPipelineStageFlags src, VkPipelineStageFlags dst)
{
    VkImageMemoryBarrier b = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    b.srcAccessMask = src_access;
    b.dstAccessMask = dst_access;
    b.oldLayout = from;
    b.newLayout = to;
    /* No ownership transfer: the viewer renders, blits and presents on one queue, and its
     * meshes come from host arrays (sinew_render itself would acquire and release the slots
     * of an externally written sinew_vk_output, see sinew_render.h). */
    b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    b.image = image;
    b.subresourceRange.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    b.subresourceRange.levelCount = 1;
    b.subresourceRange.layerCount = 1;
    vkCmdPipelineBarrier(cmd, src, dst, 0, 0, NULL, 0, NULL, 1, &b);
}

/* Renders the scene, blits it onto the next swapchain image and presents it. */
static int draw_frame(viewer* v)
{
    if (v->resized || !v->swapchain) {
        int status = recreate_swapchain(v);
        if (status != SAMPLE_EXIT_OK || !v->swapchain) return status;
    }
    sinew_render_mesh meshes[MAX_CHARACTERS];
    for (uint32_t c = 0; c < v->count; c++) {
        sinew_render_mesh m = SINEW_RENDER_MESH_INIT;
        m.vertex_count = v->vertices;
        m.triangle_count = v->triangles;
        m.indices = v->indices;
        m.positions = v->positions[c];
        m.normals = v->normals[c];
        m.column = c;
        /* The selected character is drawn a little warmer. */
        if (c == v->selected && v->count > 1) {
            m.color[0] = 0.85f;
            m.color[1] = 0.50f;
            m.color[2] = 0.32f;
        }
        meshes[c] = m;
    }
    sinew_render_frame frame = SINEW_RENDER_FRAME_INIT;
    frame.meshes = meshes;
    frame.mesh_count = v->count;
    frame.column_count = v->count;
    frame.bounds = v->bounds;
    memcpy(frame.up, v->up, sizeof frame.up);
    VkImage rendered = VK_NULL_HANDLE;
    sinew_result r = sinew_renderer_draw_image(v->renderer, &frame, &rendered);
    if (r != SINEW_OK) return fail("rendering", r);

    uint32_t index = 0;
    VkResult vr = vkAcquireNextImageKHR(v->device, v->swapchain, UINT64_MAX, v->acquired,
                                        VK_NULL_HANDLE, &index);
    if (vr == VK_ERROR_OUT_OF_DATE_KHR) {
        v->resized = 1;
        return SAMPLE_EXIT_OK;
    }
    if (vr != VK_SUCCESS && vr != VK_SUBOPTIMAL_KHR) return vk_fail("vkAcquireNextImageKHR", vr);
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkResetCommandBuffer(v->cmd, 0);
    vkBeginCommandBuffer(v->cmd, &begin);
    VkImage target = v->images[index];
    image_barrier(v->cmd, target, VK_IMAGE_LAYOUT_UNDEFINED,
                  VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT,
                  VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
    sinew_renderer_info info = SINEW_RENDERER_INFO_INIT;
    sinew_renderer_get_info(v->renderer, &info);
    VkImageBlit blit;
    memset(&blit, 0, sizeof blit);
    blit.srcSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
    blit.srcSubresource.layerCount = 1;
    blit.srcOffsets[1].x = (int32_t)info.width;
    blit.srcOffsets[1].y = (int32_t)info.height;
    blit.srcOffsets[1].z = 1;
    blit.dstSubresource = blit.srcSubresource;
    blit.dstOffsets[1].x = (int32_t)v->swap_extent.width;
    blit.dstOffsets[1].y = (int32_t)v->swap_extent.height;
    blit.dstOffsets[1].z = 1;
    vkCmdBlitImage(v->cmd, rendered, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, target,
                   VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &blit, VK_FILTER_LINEAR);
    image_barrier(v->cmd, target, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                  VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, VK_ACCESS_TRANSFER_WRITE_BIT, 0,
                  VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    vkEndCommandBuffer(v->cmd);
    VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = &v->acquired;
    submit.pWaitDstStageMask = &wait_stage;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &v->cmd;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &v->presentable[index];
    if ((vr = vkQueueSubmit(v->queue, 1, &submit, v->fence)) != VK_SUCCESS)
        return vk_fail("vkQueueSubmit", vr);
    VkPresentInfoKHR present = {VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
    present.waitSemaphoreCount = 1;
    present.pWaitSemaphores = &v->presentable[index];
    present.swapchainCount = 1;
    present.pSwapchains = &v->swapchain;
    present.pImageIndices = &index;
    VkResult pr = vkQueuePresentKHR(v->queue, &present);
    /* The blit must be done before the renderer draws into its image again, and before the
     * acquire semaphore is reused. */
    vr = vkWaitForFences(v->device, 1, &v->fence, VK_TRUE, UINT64_MAX);
    vkResetFences(v->device, 1, &v->fence);
    if (vr != VK_SUCCESS) return vk_fail("vkWaitForFences", vr);
    if (pr == VK_ERROR_OUT_OF_DATE_KHR || pr == VK_SUBOPTIMAL_KHR) v->resized = 1;
    else if (pr != VK_SUCCESS) return vk_fail("vkQueuePresentKHR", pr);
    return SAMPLE_EXIT_OK;
}

static int run(viewer* v)
{
    if (!glfwInit()) return skip_or_fail("no display (glfwInit failed; try xvfb-run -a)");
    if (!glfwVulkanSupported()) return skip_or_fail("GLFW finds no Vulkan loader or driver");
    int status = setup_scene(v);
    if (status != SAMPLE_EXIT_OK) return status;
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    v->window = glfwCreateWindow((int)v->width, (int)v->height, "sinew-viewer", NULL, NULL);
    if (!v->window) return skip_or_fail("glfwCreateWindow failed");
    glfwSetWindowUserPointer(v->window, v);
    glfwSetKeyCallback(v->window, glfw_key);
    glfwSetFramebufferSizeCallback(v->window, glfw_resized);
    if ((status = create_instance(v)) != SAMPLE_EXIT_OK) return status;
    if ((status = create_device(v)) != SAMPLE_EXIT_OK) return status;

    sinew_vk_context_desc cd = SINEW_VK_CONTEXT_DESC_INIT;
    cd.instance = v->instance;
    cd.physical_device = v->physical;
    cd.device = v->device;
    cd.queue = v->queue;
    cd.queue_family_index = v->family;
    cd.logger = sample_stderr_logger();
    sinew_result r = sinew_vk_context_create(&cd, &v->vk);
    if (r != SINEW_OK) return fail("sinew_vk_context_create", r);
    sinew_renderer_desc rd = SINEW_RENDERER_DESC_INIT;
    rd.width = v->width;
    rd.height = v->height;
    rd.max_meshes = MAX_CHARACTERS;
    if ((r = sinew_renderer_create(v->vk, &rd, &v->renderer)) != SINEW_OK)
        return fail("sinew_renderer_create", r);
    if ((status = create_swapchain(v)) != SAMPLE_EXIT_OK) return status;
    update_title(v);
    printf("sinew-viewer: %s, %u characters, %s\n", v->character.source, v->count,
           "space play/pause, 1..9 select, b backend, q quit");

    uint64_t frames = 0;
    while (!glfwWindowShouldClose(v->window) && status == SAMPLE_EXIT_OK) {
        glfwPollEvents();
        if (v->keys && frames >= 1 && v->keys[frames - 1])
            on_key_char(v, tolower((unsigned char)v->keys[frames - 1]));
        if ((r = step(v)) != SINEW_OK) return fail("stepping the characters", r);
        status = draw_frame(v);
        frames++;
        if (v->max_frames && frames >= v->max_frames) break;
    }
    vkDeviceWaitIdle(v->device);
    printf("sinew-viewer: %llu frames; backends", (unsigned long long)frames);
    for (uint32_t c = 0; c < v->count; c++) printf(" %s", sinew_skin_backend(v->world, v->skins[c]));
    printf("\n");
    return status;
}

static void cleanup(viewer* v)
{
    if (v->device) vkDeviceWaitIdle(v->device);
    sinew_renderer_destroy(v->renderer);
    sinew_vk_context_destroy(v->vk);
    if (v->device) {
        destroy_swapchain(v);
        if (v->acquired) vkDestroySemaphore(v->device, v->acquired, NULL);
        if (v->fence) vkDestroyFence(v->device, v->fence, NULL);
        if (v->pool) vkDestroyCommandPool(v->device, v->pool, NULL);
        vkDestroyDevice(v->device, NULL);
    }
    if (v->surface) vkDestroySurfaceKHR(v->instance, v->surface, NULL);
    if (v->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
            vkGetInstanceProcAddr(v->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy) destroy(v->instance, v->messenger, NULL);
    }
    if (v->instance) vkDestroyInstance(v->instance, NULL);
    if (v->window) glfwDestroyWindow(v->window);
    glfwTerminate();
    sinew_world_destroy(v->world);
    sample_character_free(&v->character);
    for (uint32_t c = 0; c < MAX_CHARACTERS; c++) {
        free(v->positions[c]);
        free(v->normals[c]);
    }
    free(v->pose);
}

int main(int argc, char** argv)
{
    viewer* v = calloc(1, sizeof *v);
    if (!v) return SAMPLE_EXIT_FAILURE;
    v->width = 1280;
    v->height = 480;
    int status = SAMPLE_EXIT_OK;
    for (int i = 1; i < argc; ++i) {
        const char* value = NULL;
        int m;
        if (sample_option_flag(argv, i, "--help") || sample_option_flag(argv, i, "-h")) {
            usage(stdout);
            goto done;
        } else if (sample_option_flag(argv, i, "--validation")) {
            v->validation = 1;
        } else if ((m = sample_shared_option(argc, argv, &i, &v->character_path, &v->backend,
                                             &v->threads, &v->params)) != 0) {
            if (m < 0) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--backends", &value)) != 0) {
            if (m < 0) goto usage_error;
            free(v->backends_text);
            v->backends_text = strdup(value);
            if (!v->backends_text) goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--frames", &value)) != 0) {
            if (m < 0 || !sample_parse_u32("--frames", value, 1, 100000000, &v->max_frames))
                goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--animation", &value)) != 0) {
            if (m < 0 ||
                !sample_parse_u32("--animation", value, 0, 1000000, &v->animation_index))
                goto usage_error;
        } else if ((m = sample_option_value(argc, argv, &i, "--keys", &value)) != 0) {
            if (m < 0) goto usage_error;
            v->keys = value;
        } else if ((m = sample_option_value(argc, argv, &i, "--size", &value)) != 0) {
            unsigned w = 0, h = 0;
            char tail = 0;
            if (m < 0 || sscanf(value, "%ux%u%c", &w, &h, &tail) != 2 || w < 16 || h < 16 ||
                w > SINEW_RENDER_MAX_SIZE || h > SINEW_RENDER_MAX_SIZE) {
                fprintf(stderr, "sinew-viewer: --size %s is not WxH with sides 16..%d\n",
                        value ? value : "", SINEW_RENDER_MAX_SIZE);
                goto usage_error;
            }
            v->width = w;
            v->height = h;
        } else {
            fprintf(stderr, "sinew-viewer: unknown option %s\n", argv[i]);
            goto usage_error;
        }
    }
    status = run(v);
    if (v->validation && v->validation_messages) {
        fprintf(stderr, "sinew-viewer: %llu Vulkan validation messages\n",
                (unsigned long long)v->validation_messages);
        if (status == SAMPLE_EXIT_OK) status = SAMPLE_EXIT_FAILURE;
    }
    cleanup(v);
    /* Messages from destruction count too. */
    if (v->validation && v->validation_messages && status == SAMPLE_EXIT_OK)
        status = SAMPLE_EXIT_FAILURE;
    goto done;
usage_error:
    usage(stderr);
    status = SAMPLE_EXIT_USAGE;
done:
    free(v->backends_text);
    sample_params_free(&v->params);
    free(v);
    return status;
}
