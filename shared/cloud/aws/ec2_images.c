/* DescribeImages and DescribeSpotPriceHistory (see ec2.h). */
#include <stdio.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "cloud/aws/ec2_internal.h"

static void parse_image(kp_arena *a, const xmlNode *it, kp_ec2_image *img)
{
    img->id = kp_aws_xml_text(a, it, "imageId");
    img->name = kp_aws_xml_text(a, it, "name");
    img->architecture = kp_aws_xml_text(a, it, "architecture");
    img->state = kp_aws_xml_text(a, it, "imageState");
    img->owner_id = kp_aws_xml_text(a, it, "imageOwnerId");
    img->creation_date = kp_aws_xml_text(a, it, "creationDate");
    img->deprecation_time = kp_aws_xml_text(a, it, "deprecationTime");
    img->root_device_name = kp_aws_xml_text(a, it, "rootDeviceName");
    img->virtualization_type = kp_aws_xml_text(a, it, "virtualizationType");
    img->platform = kp_aws_xml_text(a, it, "platform");
    img->tags = kp_ec2_parse_tags(a, it, &img->n_tags);
}

PAGE_FN(images_page, kp_ec2_image_list, kp_ec2_image, "imagesSet", parse_image)

int kp_ec2_describe_images(kp_aws_client *c, kp_arena *a, const kp_ec2_describe_images_input *in,
                           kp_ec2_image_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_list(&form, "ImageId", in->ids, in->n_ids);
    if (err == 0)
        err = kp_ec2_form_list(&form, "Owner", in->owners, in->n_owners);
    if (err == 0)
        err = kp_ec2_form_filters(&form, in->filters, in->n_filters);
    if (err == 0 && in->include_deprecated)
        err = kp_aws_form_add(&form, "IncludeDeprecated", "true");
    if (err == 0 && in->max_results > 0 && in->n_ids == 0)
        err = kp_ec2_form_int(&form, "MaxResults", in->max_results);
    kp_ec2_image_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeImages", &form, true, images_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}

static void parse_spot_price(kp_arena *a, const xmlNode *it, kp_ec2_spot_price *p)
{
    p->instance_type = kp_aws_xml_text(a, it, "instanceType");
    p->availability_zone = kp_aws_xml_text(a, it, "availabilityZone");
    p->product_description = kp_aws_xml_text(a, it, "productDescription");
    p->price_usd = kp_aws_xml_double(it, "spotPrice", 0);
    const char *ts = kp_aws_xml_text(a, it, "timestamp");
    if (!ts || kp_time_parse_rfc3339(ts, &p->timestamp_ns) < 0)
        p->timestamp_ns = 0;
}

PAGE_FN(spot_page, kp_ec2_spot_price_list, kp_ec2_spot_price, "spotPriceHistorySet",
        parse_spot_price)

int kp_ec2_describe_spot_price_history(kp_aws_client *c, kp_arena *a,
                                       const kp_ec2_spot_price_input *in,
                                       kp_ec2_spot_price_list *out)
{
    kp_buf form = KP_BUF_INIT(KP_EC2_FORM_MAX);
    int err = kp_ec2_form_list(&form, "InstanceType", in->instance_types, in->n_instance_types);
    if (err == 0)
        err = kp_ec2_form_list(&form, "ProductDescription", in->product_descriptions,
                               in->n_product_descriptions);
    if (err == 0)
        err = kp_ec2_form_filters(&form, in->filters, in->n_filters);
    if (err == 0 && in->start_time_ns > 0) {
        char when[32];
        kp_time_format_rfc3339(in->start_time_ns, when, sizeof(when));
        err = kp_aws_form_add(&form, "StartTime", when);
    }
    if (err == 0 && in->max_results > 0)
        err = kp_ec2_form_int(&form, "MaxResults", in->max_results);
    kp_ec2_spot_price_list list = {0};
    if (err == 0)
        err = kp_ec2_call(c, a, "DescribeSpotPriceHistory", &form, true, spot_page, &list);
    kp_buf_free(&form);
    if (err == 0)
        *out = list;
    return err;
}
